"""What every reader family shares (see docs/nfc.md, "Reader families"):

- `Capabilities`: what a family can do with a tag (read its NDEF card id, write one, or only see its
  UID), so enrollment and doctor treat every family alike;
- `TapFilter`: the tap rule, one tap one event;
- `PolledReader`: the thread, the reconnects and the reader-lost/back cues around a family's three
  primitives (`_connect`, `_read`, `_disconnect`), for every family but nfcpy's, whose own
  `ContactlessFrontend.connect` loop drives it (`companion.readers.nfc`);
- `ReaderLost`: what a primitive raises when the reader stopped answering.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ndef

from companion.core.config import ConfigError
from companion.games.catalog import CARD_ID
from companion.readers import TapHandler
from companion.readers.health import LinkWatch
from companion.readers.known import KnownTags

log = logging.getLogger(__name__)

DEFAULT_DEBOUNCE = 1.0  # seconds: the same card back within this after a lift is not a new tap
DEFAULT_RETRY = 2.0  # seconds between attempts to reopen a lost reader


@dataclass(frozen=True)
class Capabilities:
    """What a reader family can do with a tag."""

    reads_ndef: bool  # it reads the card id written on the tag
    writes_ndef: bool  # enrollment can write the card id on the tag

    @property
    def uid_only(self) -> bool:
        return not self.reads_ndef

    def describe(self) -> str:
        if self.writes_ndef:
            return "reads and writes the card id (NDEF)"
        return "reads the card id (NDEF)" if self.reads_ndef else "UID only"


NDEF_READ_WRITE = Capabilities(reads_ndef=True, writes_ndef=True)
UID_ONLY = Capabilities(reads_ndef=False, writes_ndef=False)


COMMON_KEYS = ("debounce", "device", "retry", "seat")


@dataclass(frozen=True)
class CommonSettings:
    """The settings every `[reader]` / `[[readers]]` entry has, checked; a key that neither these
    nor the family's `extra` keys name is refused in one line (a misspelt key is never quietly taken
    for its default: `devcie = "tty:AMA0:pn532"` would mean "auto")."""

    device: str
    seat: int | None = None
    debounce: float = DEFAULT_DEBOUNCE
    retry: float = DEFAULT_RETRY

    @classmethod
    def parse(cls, entry: Mapping[str, Any], extra: Sequence[str] = ()) -> CommonSettings:
        known = sorted({*COMMON_KEYS, *extra})
        unknown = sorted(set(entry) - set(known))
        if unknown:
            raise ConfigError(
                f"a [reader] / [[readers]] entry has unknown keys: {', '.join(unknown)} "
                f"(known: {', '.join(known)}; see docs/nfc.md)"
            )

        def number(key: str, default: float) -> float:
            value = entry.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"reader '{key}' must be a number of seconds, not {value!r}")
            return float(value)

        device = entry.get("device", "auto")
        if not isinstance(device, str) or not device:
            raise ConfigError(f"reader 'device' must be a path such as \"usb\", not {device!r}")
        seat = entry.get("seat")
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int) or seat < 0):
            raise ConfigError(f"reader 'seat' must be a seat number (0, 1, ...), not {seat!r}")
        return cls(
            device=device,
            seat=seat,
            debounce=number("debounce", DEFAULT_DEBOUNCE),
            retry=max(0.05, number("retry", DEFAULT_RETRY)),
        )

    def timing(self) -> dict[str, float]:
        return {"debounce": self.debounce, "retry": self.retry}


class ReaderLost(Exception):
    """The reader stopped answering (unplugged, its service gone); the message says why."""


def card_id_from_records(records: Sequence[Any]) -> str | None:
    """The first NDEF text record that is a card id ("game/card"), if any."""
    for record in records:
        if isinstance(record, ndef.TextRecord):
            text = str(record.text).strip()
            if CARD_ID.match(text):
                return text
    return None


class UidTag:
    """A tag known by its UID only: what a UID-only reader (a keyboard reader) sees."""

    def __init__(self, uid: str) -> None:
        self.uid = uid
        self.card: str | None = None
        self.write_error: str | None = "this reader reads UIDs only"

    @property
    def writable(self) -> bool:
        return False

    def write(self, card: str) -> bool:
        return False

    def __repr__(self) -> str:
        return f"UidTag(uid={self.uid!r})"


# One tap, one event


class TapFilter:
    """Decides which reads are taps. A card is "present" from its read until the reader sees it gone.

    - a read of the card that is present is not a tap (it lay on the reader all along, e.g. while
      the reader was lost and reopened);
    - a read of the card that left less than `debounce` seconds ago is not a tap (it was lifted a
      little and fell back, or slid at the edge of the field); the window restarts at each lift;
    - every other read is a tap.
    """

    def __init__(self, debounce: float = DEFAULT_DEBOUNCE) -> None:
        self.debounce = debounce
        self.present: str | None = None
        self.last: str | None = None
        self.left_at = -math.inf

    def arrived(self, uid: str, now: float) -> bool:
        """A tag was read: is it a tap?"""
        if uid == self.present:
            return False
        if self.present is not None:
            self.left(now)  # another card replaced it while the reader was not looking
        self.present = uid
        return not (uid == self.last and now - self.left_at < self.debounce)

    def left(self, now: float) -> None:
        """The present card (if any) is gone."""
        if self.present is not None:
            self.last, self.left_at, self.present = self.present, now, None


# A reader that polls


class ReaderLink:
    """What every reader does with what it reads and with its link: one tap goes to the enrollment's
    `intercept` or to the table, and "lost" and "back" are each said once, when the link changes.
    Its `__init__` sets what every reader keeps: where it is, its tap rule, its link's state and the
    counters its `status()` reports; `link_name` names it in the log."""

    def __init__(
        self,
        device: str,
        seat: int | None = None,
        *,
        debounce: float = DEFAULT_DEBOUNCE,
        retry: float = DEFAULT_RETRY,
        watch: LinkWatch | None = None,
        known: KnownTags | None = None,
    ) -> None:
        self.device = device
        self.seat = seat
        self.retry = retry
        self.watch = watch or LinkWatch()
        # verified UIDs and their card ids; the daemon gives every reader one shared instance
        self.known = known if known is not None else KnownTags()
        self.filter = TapFilter(debounce)
        self.intercept: Callable[[Any], Any] | None = None
        self._tap: TapHandler | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._state = "starting"  # "starting" | "ok" | "lost"
        self._error: str | None = "starting"
        self._taps = 0  # reads that were taps
        self._reads = 0  # every new tag read, tap or not
        self._opens = 0  # attempts to open the reader (more than one: it was lost and retried)
        self._polls = 0  # looks at the field the reader answered

    @property
    def link_name(self) -> str:
        return "reader"

    def _run(self) -> None:
        raise NotImplementedError

    def start(self, tap: TapHandler) -> None:
        self._tap = tap
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name=f"{self.link_name} {self.device}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            # a family's loop checks `_stopping` between polls (nfcpy's: a UDP poll waits up to 1 s)
            self._thread.join(timeout=5)
            self._thread = None

    def _deliver(self, tag: Any) -> None:
        with self._lock:
            self._taps += 1
        intercept = self.intercept
        try:
            if intercept is not None:
                try:
                    intercept(tag)
                finally:  # enrollment may have written the tag: its next tap reads it again
                    self.known.forget(tag.uid)
            elif self._tap is not None:
                if tag.card is not None:
                    self._tap(card=tag.card, seat=self.seat)
                else:
                    self._tap(uid=tag.uid, seat=self.seat)
        except Exception:  # a refused or failed tap must not stop the reader
            log.exception("the tap of %s failed", tag)

    def _answering(self) -> None:
        with self._lock:
            if self._state == "ok":
                return
            was_lost = self._state == "lost"
            self._state, self._error = "ok", None
        self._on_answer()
        if was_lost:
            log.warning("%s reader %s is back", self.link_name, self.device)
            self.watch.back(self)

    def _on_answer(self) -> None:
        """Called each time the reader answers again after it did not (opened, or back)."""

    def _lost(self, why: str) -> None:
        with self._lock:
            changed = self._state != "lost"
            self._state, self._error = "lost", why
        if changed:
            log.warning(
                "%s reader %s lost: %s; retrying every %.1f s", self.link_name, self.device, why, self.retry
            )
            self.watch.lost(self, why)


class PolledReader(ReaderLink):
    """A reader at `device` for `seat` (None: the table's shared reader), polled on its own thread.

    A family implements `_connect` (open the reader, or raise `ReaderLost`), `_read` (the tag in the
    field now, or None; `ReaderLost` if the reader is gone) and `_disconnect`. Everything else is
    here: the tap rule, reopening a lost reader every `retry` seconds, the reader-lost/back cues,
    `intercept` (enrollment takes the tags instead of the table) and `status()` for /healthz.
    """

    kind = "reader"  # the family, in /healthz
    capabilities = UID_ONLY
    poll_interval = 0.1  # seconds between two reads of an empty or unchanged field
    # Seconds after (re)opening during which an empty field is not a lift: the reader (or the
    # service in front of it) may not have looked for a card yet, and a card that lay there all
    # along must not count again once it is seen.
    settle = 0.0

    def __init__(
        self,
        device: str,
        seat: int | None = None,
        *,
        debounce: float = DEFAULT_DEBOUNCE,
        retry: float = DEFAULT_RETRY,
        watch: LinkWatch | None = None,
    ) -> None:
        super().__init__(device, seat, debounce=debounce, retry=retry, watch=watch)
        self._opened_at = -math.inf

    @property
    def label(self) -> str:
        return f"The reader {self.device}" + (f" (seat {self.seat})" if self.seat is not None else "")

    # The family's primitives

    def _connect(self) -> None:
        raise NotImplementedError

    def _read(self) -> Any:
        """The tag in the field now (with `uid`, `card`, `writable`, `write`), or None."""
        raise NotImplementedError

    def _disconnect(self) -> None:
        raise NotImplementedError

    # Reader protocol

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "kind": self.kind,
                "device": self.device,
                "connected": self._state == "ok",
                "seat": self.seat,
                "error": self._error,
                "capabilities": self.capabilities.describe(),
                "reads": self._reads,
                "opens": self._opens,
                "taps": self._taps,
                "polls": self._polls,
            }

    # The thread

    def _run(self) -> None:
        connected = False
        while not self._stopping.is_set():
            try:
                if not connected:
                    with self._lock:
                        self._opens += 1
                    self._connect()
                    connected, self._opened_at = True, time.monotonic()
                tag = self._read()
            except ReaderLost as error:
                self._lost(str(error))
                if connected:
                    self._close()
                connected = False  # the card may still lie there: the filter keeps it present
                self._stopping.wait(self.retry)
                continue
            with self._lock:
                self._polls += 1
            self._answering()
            self._seen(tag)
            self._stopping.wait(self.poll_interval)
        if connected:
            self._close()

    def _seen(self, tag: Any) -> None:
        now = time.monotonic()
        if tag is None:
            if now - self._opened_at >= self.settle:
                self.filter.left(now)
            return
        if tag.uid != self.filter.present:
            with self._lock:
                self._reads += 1
        if self.filter.arrived(tag.uid, now):
            self._deliver(tag)

    def _close(self) -> None:
        try:
            self._disconnect()
        except Exception as error:  # closing a reader that is already gone
            log.debug("closing %s: %s", self.device, error)

    @property
    def link_name(self) -> str:
        return self.kind

    def _on_answer(self) -> None:
        log.info("%s reader %s open", self.kind, self.device)
