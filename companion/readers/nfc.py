"""The NFC reader backend, on nfcpy's `ContactlessFrontend` (see docs/nfc.md).

One `NfcReader` a physical reader, each polling on a thread of its own:

- identity: the card id in the tag's NDEF text record; a tag without one is sent by its UID, which
  the table resolves through the card registry (an unknown UID plays the "unknown-card" cue);
- one tap is one event (`TapFilter`): a card lying on the reader counts once (nfcpy checks its
  presence), lifted and put back it counts again, unless it comes back within `debounce` seconds;
- a reader that cannot be opened, or whose `connect` fails (nfcpy returns False on an I/O error,
  and some drivers raise), is reported lost, closed, and reopened every `retry` seconds; it is back
  once it has completed a poll. `LinkWatch` turns that into the table's reader-lost/back cues.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ndef
import nfc
import nfc.clf
import nfc.tag
import nfc.tag.tt2

from companion.core.config import ConfigError
from companion.core.cues import Cue
from companion.readers import Reader, VirtualReader
from companion.readers.base import (
    COMMON_KEYS,
    DEFAULT_DEBOUNCE,
    DEFAULT_RETRY,
    NDEF_READ_WRITE,
    CommonSettings,
    ReaderLink,
    card_id_from_records,
)
from companion.readers.frontend import close_frontend, open_frontend
from companion.readers.health import LinkWatch

log = logging.getLogger(__name__)

# What nfcpy polls for: NTAG21x stickers and MIFARE Classic cards are 106A. Polling 106B and 212F
# too would slow every poll, keep the field busy and turn a FeliCa card or a phone into an unknown
# card. The UDP test driver answers only what its peer emulates (a Type 3 tag) and waits a whole
# second on every other kind, so it polls 212F alone.
DEFAULT_TARGETS = ("106A",)
UDP_TARGETS = ("212F",)
PI_UARTS = ("tty:AMA0:pn532", "tty:S0:pn532")


class _QuietSearch(logging.Filter):
    """nfcpy logs every search for a reader at INFO and every miss at ERROR; a lost reader is
    retried every few seconds, and `NfcReader` logs each change of state itself, once."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        return not message.startswith(("searching for reader on path", "no reader available on path"))


logging.getLogger("nfc.clf").addFilter(_QuietSearch())


# Reading a tag


class NfcTag:
    """A tag on the reader, as read once: its UID, the card id on it, and how to write one.
    `kind` names a tag known by its UID only whatever it holds (a MIFARE Classic card)."""

    def __init__(self, tag: Any, uid: str, card: str | None, ndef_area: Any, kind: str | None = None) -> None:
        self.tag = tag
        self.uid = uid
        self.card = card
        self.kind = kind
        self._ndef = ndef_area
        self.write_error: str | None = None  # why the last `write` returned False

    @property
    def writable(self) -> bool:
        """True if the tag has an NDEF area we may write (NTAG21x as sold; not once locked)."""
        return bool(self._ndef is not None and self._ndef.is_writeable)

    def write(self, card: str) -> bool:
        """Write `card` as the tag's only NDEF record and read it back; False if it did not take,
        with `write_error` saying why."""
        self.write_error = None
        if not self.writable:
            self.write_error = (
                f"a {self.kind} is known by its UID only" if self.kind else "the tag is read-only"
            )
            return False
        record = ndef.TextRecord(card, "en")
        try:
            size = len(b"".join(ndef.message_encoder([record])))
            if size > self._ndef.capacity:
                self.write_error = f"it holds {self._ndef.capacity} bytes, the card id needs {size}"
                return False
            self._ndef.records = [record]
            # has_changed re-reads the tag and compares it with what was just written.
            ok = not self._ndef.has_changed and card_id_from_records(self._ndef.records) == card
        except (nfc.tag.TagCommandError, nfc.clf.CommunicationError, AttributeError, ValueError) as error:
            log.info("writing %s to tag %s failed: %s", card, self.uid, error)
            self.write_error = f"the write failed: {error}; keep the tag still to retry"
            return False
        if ok:
            self.card = card
        else:
            self.write_error = "the card id did not read back"
        return ok

    def __repr__(self) -> str:
        return f"NfcTag(uid={self.uid!r}, card={self.card!r})"


def is_mifare_classic(tag: Any) -> bool:
    """A MIFARE Classic card (SAK bit 0x08): nfcpy takes it for a Type 2 tag, but its memory needs
    an authentication nfcpy does not do, so every read is refused."""
    sel_res: Any = getattr(tag.target, "sel_res", None) if isinstance(tag, nfc.tag.tt2.Type2Tag) else None
    return bool(sel_res) and bool(sel_res[0] & 0x08)


def present_by_reselect(tag: Any) -> Callable[[], bool]:
    """A presence check for a tag that refuses reads: select it again by its UID."""
    wanted = nfc.clf.RemoteTarget("106A", sel_req=bytes(tag.identifier))

    def present() -> bool:
        return tag.clf.sense(wanted) is not None

    return present


def read_tag(tag: Any) -> NfcTag | None:
    """Read a tag's UID and NDEF card id; None if the tag left before it could be read. A tag whose
    NDEF message cannot be decoded (torn by a lift during a write, or foreign) is known by its UID."""
    uid = bytes(tag.identifier).hex()
    if is_mifare_classic(tag):
        tag._is_present = present_by_reselect(tag)  # nfcpy's check reads page 0: refused
        return NfcTag(tag, uid, None, None, kind="MIFARE Classic card")
    area = None
    try:
        area = tag.ndef  # None: no NDEF (unformatted, not readable, or the read was cut short)
        if area is None:
            if not tag.is_present:
                return None
            area = tag.ndef  # nfcpy cannot tell "no NDEF" from a read that failed: once more
        records = area.records if area is not None else []
    except (nfc.tag.TagCommandError, nfc.clf.CommunicationError) as error:
        log.debug("tag %s: read cut short (%s)", uid, error)
        return None
    except (ndef.DecodeError, ValueError, TypeError, IndexError, KeyError) as error:
        log.info("tag %s: its NDEF message cannot be read (%s); it counts by its UID", uid, error)
        records = []
    return NfcTag(tag, uid, card_id_from_records(records), area)


# The reader


class NfcReader(ReaderLink):
    """An nfcpy reader at `device`, delivering taps for `seat` (None: the table's shared reader).

    `device="auto"`: the reader `auto` found (`clf` and `found`: the frontend its search opened, used
    as it is; `companion.readers.families`); once lost it searches `auto_paths()` again every `retry`
    seconds. `intercept`, when set, receives each new tag instead of the table (card enrollment)."""

    capabilities = NDEF_READ_WRITE

    def __init__(
        self,
        device: str,
        seat: int | None = None,
        *,
        debounce: float = DEFAULT_DEBOUNCE,
        retry: float = DEFAULT_RETRY,
        targets: Sequence[str] | None = None,
        watch: LinkWatch | None = None,
        clf: Any = None,
        found: str | None = None,
    ) -> None:
        super().__init__(device, seat, debounce=debounce, retry=retry, watch=watch)
        self.targets = list(targets or (UDP_TARGETS if device.startswith("udp") else DEFAULT_TARGETS))
        self._clf = clf
        self._opened: str | None = found
        self._polls = 0
        self._in_session = False

    @property
    def label(self) -> str:
        return f"The reader {self._opened or self.device}" + (
            f" (seat {self.seat})" if self.seat is not None else ""
        )

    # Reader protocol

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "kind": "nfc",
                "capabilities": self.capabilities.describe(),
                "device": self.device,
                "path": self._opened,
                "connected": self._state == "ok",
                "seat": self.seat,
                "error": self._error,
                "reads": self._reads,
                "opens": self._opens,
                "taps": self._taps,
            }

    # The polling thread

    def _run(self) -> None:
        clf, self._clf = self._clf, None
        while not self._stopping.is_set():
            if clf is None:
                clf = self._open()
                if clf is None:
                    self._stopping.wait(self.retry)
                    continue
            self._polls = 0
            try:
                result = clf.connect(rdwr=self._options(), terminate=self._terminate)
                why = "I/O error"  # nfcpy logged the details and returned False
            except Exception as error:  # some drivers raise instead (a vanished tty, a bad reply)
                result, why = False, f"{type(error).__name__}: {error}"
            if result is False and not self._stopping.is_set():
                self._in_session = False  # the card may still lie there: the filter keeps it
                self._lost(why)
                close_frontend(clf)
                clf = None
                self._stopping.wait(self.retry)
        close_frontend(clf)

    def _open(self) -> Any:
        with self._lock:
            self._opens += 1
        if self.device == "auto":
            return self._search()
        try:
            clf = open_frontend(self.device)
            why = f"no reader found at {self.device}"
        except Exception as error:  # nfcpy raises for a fully given path it cannot open
            clf, why = None, f"cannot open {self.device} ({error})"
        if clf is None:
            self._lost(why)
            return None
        with self._lock:
            self._opened = str(getattr(clf.device, "path", self.device))
            first = self._state == "starting"
        if first:
            self._answering()  # opened at start-up: nothing was lost, nothing to announce
        log.info("NFC reader %s open (%s)", self.device, self._opened)
        return clf

    def _search(self) -> Any:
        """`auto`, lost: the first reader that answers on `auto_paths()` (it is back once it polls)."""
        found = search_reader()
        if found is None:
            self._lost(f"no reader found ({', '.join(auto_paths())})")
            return None
        path, clf = found
        with self._lock:
            self._opened = path
        return clf

    def _options(self) -> dict[str, Any]:
        return {
            "targets": self.targets,
            "on-connect": self._on_connect,
            "on-release": self._on_release,
            "iterations": 1,  # return to `terminate` after every poll, so stop() is prompt
            "interval": 0.0,
            "beep-on-connect": False,  # the companion plays its own cues
        }

    def _terminate(self) -> bool:
        # nfcpy calls this before its first poll and after each one that found nothing (and while a
        # tag is held): from the second call on, the reader has answered a whole poll.
        self._polls += 1
        if self._polls >= 2 and not self._in_session:
            self._answering()
            self.filter.left(time.monotonic())  # an empty field: whatever lay there is gone
        return self._stopping.is_set()

    def _on_connect(self, tag: Any) -> bool:
        self._in_session = True
        self._answering()
        try:
            read = read_tag(tag)
        except Exception:  # a tag must never take the reader down (an exception here would)
            log.exception("reading tag %s failed; it counts by its UID", bytes(tag.identifier).hex())
            read = NfcTag(tag, bytes(tag.identifier).hex(), None, None)
        if read is None:
            self._in_session = False
            return False  # not held: nfcpy polls again and reads it afresh
        if self.filter.arrived(read.uid, time.monotonic()):
            self._deliver(read)
        with self._lock:
            self._reads += 1
        return True  # hold it: nfcpy checks its presence until it is lifted

    def _on_release(self, tag: Any) -> bool:
        self._in_session = False
        self.filter.left(time.monotonic())
        return True

    @property
    def link_name(self) -> str:
        return "NFC"


# Finding a reader


def is_raspberry_pi() -> bool:
    try:
        return "Raspberry Pi" in Path("/proc/device-tree/model").read_text(errors="replace")
    except OSError:
        return False


def auto_paths() -> list[str]:
    """Where "auto" looks: USB, then (on a Pi only, never a laptop's serial port) a PN532 on the UART."""
    return ["usb", *(PI_UARTS if is_raspberry_pi() else ())]


def search_reader(paths: Sequence[str] | None = None) -> tuple[str, Any] | None:
    """The first of `paths` (default `auto_paths()`) where a reader opens, and its open frontend."""
    for path in auto_paths() if paths is None else paths:
        try:
            clf = open_frontend(path)
        except Exception as error:
            log.debug("no reader at %s: %s", path, error)
            continue
        if clf is not None:
            return path, clf
    return None


READER_KEYS = (*COMMON_KEYS, "targets")


@dataclass(frozen=True)
class ReaderSettings:
    """One `[reader]` / `[[readers]]` entry of the config for an nfcpy reader, checked: a misspelt
    key is refused, never quietly taken for its default (`devcie = "tty:AMA0:pn532"` would mean "auto")."""

    device: str
    seat: int | None = None
    debounce: float = DEFAULT_DEBOUNCE
    retry: float = DEFAULT_RETRY
    targets: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, entry: dict[str, Any]) -> ReaderSettings:
        common = CommonSettings.parse(entry, extra=("targets",))
        targets = entry.get("targets")
        if targets is not None and (
            not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets)
        ):
            raise ConfigError('reader \'targets\' must be a list such as ["106A", "212F"]')
        return cls(
            device=common.device,
            seat=common.seat,
            debounce=common.debounce,
            retry=common.retry,
            targets=tuple(targets) if targets else None,
        )

    def reader(self, watch: LinkWatch, device: str | None = None, **opened: Any) -> NfcReader:
        """The reader; `opened` may hand it the `clf` detection opened and the path it `found`."""
        return NfcReader(
            device or self.device,
            self.seat,
            debounce=self.debounce,
            retry=self.retry,
            targets=self.targets,
            watch=watch,
            **opened,
        )


def readers_from_config(
    entries: Sequence[dict[str, Any]],
    announce: Callable[[Cue], None] | None = None,
    watch: LinkWatch | None = None,
) -> list[Reader]:
    """One reader per `[reader]` / `[[readers]]` entry: "virtual" is the virtual mat; anything else an
    nfcpy path, used as given even if nothing answers there yet (it is reported lost and retried).
    "auto" is `companion.readers.families`' (it looks for every family)."""
    watch = watch or LinkWatch(announce)
    readers: list[Reader] = []
    for entry in entries:
        settings = ReaderSettings.parse(entry)
        if settings.device == "virtual":
            readers.append(VirtualReader())
        else:
            readers.append(settings.reader(watch))
    return readers
