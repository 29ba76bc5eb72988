"""Card readers. A reader turns physical taps into `tap(card=..., uid=..., seat=...)` calls on the
table, and reports its health for /healthz and the scoreboard.

Here: the `Reader` interface and the virtual mat. What every family shares (`base`), choosing a
family by device (`families`), one module per family (`nfc` with `nfc_link`, `pcsc`, `keyboard`,
`pn532`, `rc522`), NDEF on Type 2 tag pages (`ntag`), reader-lost/back cues (`health`), the card
registry of UIDs (`registry`), the UIDs verified lately and their card ids (`known`) and enrolling
a deck's tags (`enrollment`).

Imports: companion.core, companion.games, companion.table, companion.pins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

TapHandler = Callable[..., Any]
"""`tap(card=None, uid=None, seat=None)`: the table's own `Table.tap`."""


class Reader(Protocol):
    def start(self, tap: TapHandler) -> None:
        """Begin delivering taps (on a thread of the reader's own)."""

    def stop(self) -> None: ...

    def status(self) -> dict[str, Any]:
        """Health for /healthz: {"kind": "virtual" | "nfc" | "pcsc" | "keyboard", "device": ...,
        "connected": bool, "seat": int | None, "error": str | None}, and for a real reader its
        "capabilities" (`companion.readers.base.Capabilities.describe()`) and counters."""


class VirtualReader:
    """The virtual mat: taps arrive through POST /api/taps, which calls the table directly."""

    def start(self, tap: TapHandler) -> None:
        pass

    def stop(self) -> None:
        pass

    def status(self) -> dict[str, Any]:
        return {"kind": "virtual", "device": "virtual", "connected": True, "seat": None, "error": None}
