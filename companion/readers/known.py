"""UIDs a full read has verified, and the card id each carried: a repeat tap needs only activation.

The rules (docs/nfc.md, "Known tags"), each there so that the cache never names a card the
tag does not carry:

- only a card id read from the tag itself is kept (`remember(uid, None)` drops the UID: a UID-only
  tag, a blank or torn one, goes through the registry and is read again each time);
- an entry lives while its tag keeps being seen: `card_for` answers only within `life` seconds of the
  last time the UID was read or met (each answer and `seen` restart the clock). A tag that lies on
  the reader is met every poll; one that left for longer than `life` (1 s) is read again in full.
  Rewriting a tag with another device (a phone) takes it off this reader for longer than that, so
  the next tap reads the new record;
- the companion's own changes drop entries at once: a tag handed to enrollment is forgotten after it
  (`forget(uid)`), a registry write, here or by another process (the `stamp`, the registry's
  `generation`), forgets them all, and a read that began before such a change is not remembered
  after it (`generation`).

Pure: the clock is passed in. One instance is shared by every reader of the daemon, so it locks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass

DEFAULT_LIFE = 1.0  # seconds after the last sighting of a UID that its card id is still trusted


@dataclass
class _Entry:
    card: str
    seen: float


class KnownTags:
    """UIDs a full read has verified, and the card id each carried (the rules above)."""

    def __init__(self, life: float = DEFAULT_LIFE, stamp: Callable[[], Hashable] | None = None) -> None:
        """`stamp`, if given, says when something outside changed (the registry's `generation`):
        a new stamp forgets every entry."""
        self.life = life
        self._stamp_of = stamp
        self._stamp: Hashable = stamp() if stamp is not None else None
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self._generation = 0
        self.hits = 0  # taps and polls answered from the cache (status, benchmarks)

    def _check_stamp(self) -> None:
        """Under the lock: forget everything if the outside changed since last looked."""
        if self._stamp_of is None:
            return
        stamp = self._stamp_of()
        if stamp != self._stamp:
            self._stamp = stamp
            self._generation += 1
            self._entries.clear()

    @property
    def generation(self) -> int:
        """Counts `forget` calls: a reader takes it before a read and hands it to `remember`."""
        with self._lock:
            self._check_stamp()
            return self._generation

    def card_for(self, uid: str, now: float) -> str | None:
        """The verified card id of `uid`, or None: read the tag."""
        with self._lock:
            self._check_stamp()
            entry = self._entries.get(uid)
            if entry is None:
                return None
            if not 0 <= now - entry.seen <= self.life:
                del self._entries[uid]
                return None
            entry.seen = now
            self.hits += 1
            return entry.card

    def seen(self, uid: str, now: float) -> None:
        """The tag `uid` is still on the reader (a held card's poll): its entry's clock restarts."""
        with self._lock:
            entry = self._entries.get(uid)
            if entry is not None and 0 <= now - entry.seen <= self.life:
                entry.seen = now

    def remember(self, uid: str, card: str | None, now: float, generation: int | None = None) -> None:
        """After a full read of `uid`: `card` is what it carried (None: nothing to trust, drop it).
        `generation`, if given, is `self.generation` taken before the read: a `forget` since then
        means the read may predate a change, and it is not kept."""
        with self._lock:
            self._check_stamp()
            if card is None or (generation is not None and generation != self._generation):
                self._entries.pop(uid, None)
                return
            self._entries[uid] = _Entry(card, now)

    def forget(self, uid: str | None = None) -> None:
        """Drop one UID (a write through the companion) or all (a registry change, an import)."""
        with self._lock:
            self._generation += 1
            if uid is None:
                self._entries.clear()
            else:
                self._entries.pop(uid, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)
