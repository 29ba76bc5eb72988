"""The NFC reader backend, on nfcpy's drivers (see docs/nfc.md).

One `NfcReader` a physical reader, each polling on a thread of its own:

- identity: the card id in the tag's NDEF text record; a tag without one is sent by its UID, which
  the table resolves through the card registry (an unknown UID plays the "unknown-card" cue);
- only what names the card is sent (`companion.readers.nfc_link`): an activation, then, unless the
  UID was verified lately (`KnownTags`), the READs that cover the record; a MIFARE Classic is named
  by its UID unread; enrollment gets nfcpy's full tag object, which it writes through;
- one tap is one event (`TapFilter`): a card lying on the reader counts once (its presence is
  checked by selecting it again), lifted and put back it counts again, unless it comes back within
  `debounce` seconds;
- a reader that cannot be opened, or whose driver fails (an I/O error, a bad reply), is reported
  lost, closed, and reopened every `retry` seconds; it is back once it has completed a poll.
  `LinkWatch` turns that into the table's reader-lost/back cues.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ndef
import nfc
import nfc.clf
import nfc.clf.pn53x
import nfc.tag
import nfc.tag.tt2

from companion.core.config import ConfigError
from companion.core.cues import Cue
from companion.pins.board import is_raspberry_pi  # the device tree says so
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
from companion.readers.nfc_link import Gone, Link, Seen, link_for
from companion.readers.ntag import Type2Tag

log = logging.getLogger(__name__)

# What nfcpy polls for: NTAG21x stickers and MIFARE Classic cards are 106A. Polling 106B and 212F
# too would slow every poll, keep the field busy and turn a FeliCa card or a phone into an unknown
# card. The UDP test driver answers only what its peer emulates (a Type 3 tag) and waits a whole
# second on every other kind, so it polls 212F alone.
DEFAULT_TARGETS = ("106A",)
UDP_TARGETS = ("212F",)
PI_UARTS = ("tty:AMA0:pn532", "tty:S0:pn532")
CLASSIC = "MIFARE Classic card"
# Seconds between two polls of an empty field, and between two presence checks of a held card: a
# card laid down is met within this plus one poll (docs/nfc.md, "Polling").
POLL_INTERVAL = 0.02


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
        return NfcTag(tag, uid, None, None, kind=CLASSIC)
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


def read_type2(link: Link, uid: str) -> NfcTag | None:
    """A Type 2 tag's card id from the READs that cover it (READ 4, and 8 if the record goes on);
    None if the tag left before it was read."""
    try:
        tag = Type2Tag(uid, link.read, None)
    except Gone:
        return None
    return NfcTag(None, uid, tag.card, None)


# The reader


class NfcReader(ReaderLink):
    """An nfcpy reader at `device`, delivering taps for `seat` (None: the table's shared reader).

    `device="auto"`: the reader `auto` found (`clf` and `found`: the frontend its search opened, used
    as it is; `companion.readers.families`); once lost it searches `auto_paths()` again every `retry`
    seconds. `intercept`, when set, receives each new tag instead of the table (card enrollment)."""

    capabilities = NDEF_READ_WRITE
    poll_interval = POLL_INTERVAL

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
        self._polls = 0  # polls and presence checks answered (tests wait on it)

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
            try:
                self._poll(link_for(clf, self.targets))
            except Exception as error:  # the reader stopped answering: a vanished tty, a bad reply
                if self._stopping.is_set():
                    break
                self._lost(f"{type(error).__name__}: {error}")  # the filter keeps a card that lies there
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

    def _poll(self, link: Link) -> None:
        """Poll until stopped (a reader that stops answering raises): each tag met is read, offered
        as a tap, and held until it is lifted."""
        while not self._stopping.is_set():
            seen = link.poll()
            self._polls += 1
            self._answering()  # it answered a whole poll
            if seen is None:
                self.filter.left(time.monotonic())  # an empty field: whatever lay there is gone
                self._stopping.wait(self.poll_interval)
                continue
            held = self._met(link, seen)
            if held is not None:
                self._hold(held, seen.uid)

    def _met(self, link: Link, seen: Seen) -> Callable[[], bool] | None:
        """Read the tag a poll met and deliver it if it is a tap; how to check it is still there
        (None: it left before it could be read, poll again)."""
        try:
            read, present = self._identify(link, seen)
        except (OSError, nfc.clf.pn53x.Chipset.Error):
            raise  # the reader, not the tag
        except Exception:  # a tag must never take the reader down
            log.exception("reading tag %s failed; it counts by its UID", seen.uid)
            read, present = NfcTag(None, seen.uid, None, None), lambda: link.present(seen)
        if read is None:
            return None
        with self._lock:
            self._reads += 1
        if self.filter.arrived(read.uid, time.monotonic()):
            self._deliver(read)
        if read.tag is not None:
            link.after_full_tag()
        return present

    def _identify(self, link: Link, seen: Seen) -> tuple[Any, Callable[[], bool]]:
        """The tag `seen` as a `TagLike` (None: it left) and its presence check. A Type 2 tag is
        named by the cache, or by the READs that cover its card id; a MIFARE Classic by its UID,
        unread; enrollment (`intercept`) and other kinds of tag get nfcpy's full tag object."""

        def present() -> bool:
            return link.present(seen)

        if seen.classic:  # known by its UID: nothing is sent to it
            return NfcTag(None, seen.uid, None, None, kind=CLASSIC), present
        enrolling = self.intercept is not None
        # The cache names Type 2 tags alone: another kind is held by nfcpy's tag object, as
        # `present` selects a 106A tag by its UID (a Type 3 IDm would raise: the reader "lost").
        cached = seen.type2 and not enrolling
        if cached and (card := self.known.card_for(seen.uid, time.monotonic())) is not None:
            return NfcTag(None, seen.uid, card, None), present
        generation = self.known.generation
        if seen.type2 and not enrolling:
            read = read_type2(link, seen.uid)
        else:
            full = link.full_tag(seen)
            read = read_tag(full) if full is not None else None
            if not seen.type2 and full is not None:
                present = lambda: bool(full.is_present)  # noqa: E731  # nfcpy's own check for its kind
        if read is not None and not enrolling:
            self.known.remember(seen.uid, read.card, time.monotonic(), generation)
        return read, present

    def _hold(self, present: Callable[[], bool], uid: str) -> None:
        """A tag lies on the reader: check it is still there every `poll_interval`, then it left."""
        while not self._stopping.wait(self.poll_interval):
            self._polls += 1
            if not present():
                self.filter.left(time.monotonic())
                return
            self.known.seen(uid, time.monotonic())  # still there: its card id stays trusted

    @property
    def link_name(self) -> str:
        return "NFC"


# Finding a reader


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
