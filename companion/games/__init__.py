"""The game engines, by game name."""

from __future__ import annotations

from typing import Any

from companion.catalog import GameData
from companion.games.base import Engine

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
