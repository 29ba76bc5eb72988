"""The games: each game's rules as a pure engine (no I/O, no clock, no randomness), the contract they
share (`base`), the game data in `seeds/` (`catalog`), games kept outside the package (`packs`), and
here the shipped engines by game name.

Imports: companion.core.
"""

from __future__ import annotations

from typing import Any

from companion.games.base import Engine
from companion.games.catalog import GameData

ENGINE_CLASSES: dict[str, type[Engine[Any]]] = {}


def _register() -> None:
    from companion.games.peanuts import Peanuts
    from companion.games.spy import Spy
    from companion.games.spy_team import SpyTeam

    for engine in (SpyTeam, Spy, Peanuts):
        ENGINE_CLASSES[engine.game] = engine


def build_engines(catalog: dict[str, GameData]) -> dict[str, Engine[Any]]:
    """One engine for each game that has both data and rules."""
    if not ENGINE_CLASSES:
        _register()
    return {game: cls(catalog[game]) for game, cls in ENGINE_CLASSES.items() if game in catalog}
