"""What the web layer talks to, in a leaf module: the API blueprints and the app factory all import
it, and it imports none of them (tests/test_imports.py keeps companion/ free of import cycles)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flask import current_app

if TYPE_CHECKING:  # types only: importing them at run time is not needed
    from companion.games.catalog import GameData
    from companion.games.packs import Pack
    from companion.network.hotspot import Hotspot
    from companion.pins.buttons import TableButtons
    from companion.readers.enrollment import CardDesk
    from companion.table.table import Table
    from companion.webapp.events import Broker
    from companion.webapp.pairing import Pairing

EXTENSION = "companion"  # the key of `Services` in `app.extensions`


@dataclass
class Services:
    """The running table and its parts, kept on `app.extensions["companion"]`. `cards` is the card
        registry and enrollment desk (None: this companion has none); `health` adds to /healthz; `packs` the
        games loaded from pack folders (companion.games.packs); `pairing` the control devices paired with a
        code (None: pairing is off); `buttons` the table's buttons (None: it has none); `network` the
    access point's watcher (companion.network.hotspot; None: no [network])."""

    table: Table
    broker: Broker
    catalog: dict[str, GameData]
    token: str | None
    health: Callable[[], dict[str, Any]] = field(default=lambda: {})
    cards: CardDesk | None = None
    packs: dict[str, Pack] = field(default_factory=dict)  # games of COMPANION_GAME_PACKS, by name
    pairing: Pairing | None = None  # control devices paired with a code (companion.webapp.pairing)
    buttons: TableButtons | None = None  # seat buttons, Next and Undo (`POST /api/buttons` on mock pins)
    network: Hotspot | None = None  # [network]: the table's own Wi-Fi (None: it has none)


def services() -> Services:
    """The services of the app handling the current request."""
    found = current_app.extensions[EXTENSION]
    if not isinstance(found, Services):
        raise TypeError(f"app.extensions[{EXTENSION!r}] is not a Services: {found!r}")
    return found
