"""Reader health for the whole table: which readers are lost, and the cues that say so.

Kept apart from the nfcpy backend so that code which only reports health needs no nfcpy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from companion.core.cues import Cue

log = logging.getLogger(__name__)


class LinkWatch:
    """Turns the readers' ups and downs into the table's cues: "reader-lost" when one reader stops,
    "reader-back" once every reader answers again (the table has one status LED)."""

    def __init__(self, announce: Callable[[Cue], None] | None = None) -> None:
        self._announce = announce
        self._lost: set[int] = set()
        self._lock = threading.Lock()

    def lost(self, reader: Any, why: str) -> None:
        with self._lock:
            new = id(reader) not in self._lost
            self._lost.add(id(reader))
        if new:
            text = f"{reader.label} stopped answering: {why}. Check its cable."
            self._cue(Cue("reader-lost", seat=reader.seat, text=text, data={"device": reader.device}))

    def back(self, reader: Any) -> None:
        with self._lock:
            if id(reader) not in self._lost:
                return
            self._lost.discard(id(reader))
            everyone = not self._lost
        if everyone:
            text = f"{reader.label} answers again."
            self._cue(Cue("reader-back", seat=reader.seat, text=text, data={"device": reader.device}))

    def found(self, reader: Any, path: str) -> None:
        """`auto` found a reader after start-up: the table now reads from it (the reader-back cue)."""
        text = f"Found the NFC reader at {path}: taps now come from it."
        self._cue(
            Cue("reader-back", seat=reader.seat, text=text, data={"device": reader.device, "found": path})
        )

    def _cue(self, cue: Cue) -> None:
        if self._announce is None:
            return
        try:
            self._announce(cue)
        except Exception:  # the table's listeners must not take the reader thread down
            log.exception("announcing %s failed", cue.name)
