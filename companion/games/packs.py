"""Game packs: games kept outside the package (a club's own game, the tests' toy game).

`COMPANION_GAME_PACKS` lists pack folders, separated like PATH (`:` on Linux). A pack folder holds
one or more games, each as files named after the game:

    <game>.toml   its data, exactly like seeds/*.toml (title, players, options, cards)
    <game>.py     its engine: a subclass of companion.games.base.Engine with `game = "<game>"`
    <game>.js     its renderer for the pages (optional; without one the pages show seats and scores)
    <game>.css    its styles (optional)

The daemon plays a pack's games like the shipped ones, and GET /api/games tells the pages where to
load the renderer from (/packs/<game>.js). A pack game may not reuse a shipped game's name.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.games import build_engines
from companion.games.base import Engine
from companion.games.catalog import DataError, GameData, load_catalog, load_game_file

ENV = "COMPANION_GAME_PACKS"


@dataclass(frozen=True)
class Pack:
    """One game of a pack folder."""

    folder: Path
    data: GameData
    engine: type[Engine[Any]]

    def asset(self, suffix: str) -> Path | None:
        """The game's renderer file with `suffix` (".js", ".css"), if the pack has one."""
        path = self.folder / f"{self.data.game}{suffix}"
        return path if path.is_file() else None


def pack_folders(env: Mapping[str, str] | None = None) -> list[Path]:
    value = (os.environ if env is None else env).get(ENV, "")
    return [Path(part) for part in value.split(os.pathsep) if part]


def load_packs(env: Mapping[str, str] | None = None) -> dict[str, Pack]:
    """Every game of the pack folders `COMPANION_GAME_PACKS` names, by game name."""
    packs: dict[str, Pack] = {}
    for folder in pack_folders(env):
        if not folder.is_dir():
            raise DataError(f"{ENV}: {folder} is not a folder")
        for path in sorted(folder.glob("*.toml")):
            data = load_game_file(path)
            if data.game in packs:
                raise DataError(f"{path}: game {data.game!r} is defined twice")
            packs[data.game] = Pack(folder, data, _engine_class(folder / f"{data.game}.py", data.game))
    return packs


def _engine_class(path: Path, game: str) -> type[Engine[Any]]:
    """The Engine subclass for `game` defined in the module at `path`."""
    spec = importlib.util.spec_from_file_location(f"companion_pack_{game.replace('-', '_')}", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise DataError(f"{path}: the engine of pack game {game!r} is missing")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look their module up there
    spec.loader.exec_module(module)
    for _, value in inspect.getmembers(module, inspect.isclass):
        if (
            issubclass(value, Engine)
            and not inspect.isabstract(value)
            and getattr(value, "game", None) == game
        ):
            return value
    raise DataError(f"{path}: no Engine subclass with game = {game!r}")


def playable_games(env: Mapping[str, str] | None = None) -> tuple[dict[str, Engine[Any]], dict[str, Pack]]:
    """The engines of the shipped games and of the packs, and the packs (for their renderers)."""
    engines = build_engines(load_catalog())
    packs = load_packs(env)
    for game, pack in packs.items():
        if game in engines:
            raise DataError(f"{pack.folder}: pack game {game!r} has the name of a shipped game")
        engines[game] = pack.engine(pack.data)
    return engines, packs
