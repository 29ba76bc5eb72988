"""The game data in `seeds/`: one TOML file a game, card ids and attributes, validated on load.

A file looks like::

    game = "spy-team"
    title = "Spy Team"
    min_players = 4
    max_players = 4
    short_title = "Spy Team"     # optional: the scoreboard's heading (default: title)
    # any other top-level table or value is the game's own (mission tiles, combinations...)

    [[cards]]
    id = "spy-team/red-1"        # always "<game>/<card>", stable: tags carry it
    name = "Red 1"               # what players call it
    colour = "red"               # any further keys are the card's attributes
    number = 1
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.core.resources import seeds_dir

CARD_ID = re.compile(r"^[a-z0-9-]+/[a-z0-9-]+$")
_OWN_KEYS = {"game", "title", "short_title", "min_players", "max_players", "cards"}


class DataError(Exception):
    """Game data that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Card:
    id: str
    name: str
    attrs: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.attrs[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, **self.attrs}


@dataclass(frozen=True)
class GameData:
    game: str
    title: str
    min_players: int
    max_players: int
    cards: dict[str, Card]
    extra: dict[str, Any]
    short_title: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "title": self.title,
            "short_title": self.short_title or self.title,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "cards": [card.to_json() for card in self.cards.values()],
            **self.extra,
        }


def load_game_file(path: Path) -> GameData:
    """Read and validate one game file."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DataError(f"{path}: cannot read it ({error.strerror})") from error
    except tomllib.TOMLDecodeError as error:
        raise DataError(f"{path}: not valid TOML ({error})") from error
    return parse_game(raw, str(path))


def parse_game(raw: dict[str, Any], where: str) -> GameData:
    def fail(message: str) -> DataError:
        return DataError(f"{where}: {message}")

    game, title, short_title = _names(raw, fail)
    low, high = raw.get("min_players"), raw.get("max_players")
    if not (isinstance(low, int) and isinstance(high, int) and 1 <= low <= high):
        raise fail("'min_players' and 'max_players' must be whole numbers with min <= max")
    entries = raw.get("cards")
    if not isinstance(entries, list) or not entries:
        raise fail("there must be at least one [[cards]] entry")
    cards = parse_cards(entries, game, fail)
    extra = {key: value for key, value in raw.items() if key not in _OWN_KEYS}
    return GameData(game, title, low, high, cards, extra, short_title)


def _names(raw: dict[str, Any], fail: Callable[[str], DataError]) -> tuple[str, str, str]:
    """The game's name, its title and its short title (the title when left out)."""
    game = raw.get("game")
    if not isinstance(game, str) or not re.fullmatch(r"[a-z0-9-]+", game):
        raise fail("'game' must be a lower-case name such as \"spy-team\"")
    title = raw.get("title")
    if not isinstance(title, str) or not title:
        raise fail("'title' is missing")
    short_title = raw.get("short_title", title)
    if not isinstance(short_title, str) or not short_title:
        raise fail("'short_title' must be a non-empty string")
    return game, title, short_title


def parse_cards(entries: list[Any], game: str, fail: Callable[[str], DataError]) -> dict[str, Card]:
    """The [[cards]] entries of `game`, by card id."""
    cards: dict[str, Card] = {}
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise fail(f"card #{number} is not a table")
        card_id, name = entry.get("id"), entry.get("name")
        if not isinstance(card_id, str) or not CARD_ID.match(card_id):
            raise fail(f'card #{number} has no valid id ("{game}/<card>", lower case)')
        if not card_id.startswith(game + "/"):
            raise fail(f'card {card_id} does not start with "{game}/"')
        if card_id in cards:
            raise fail(f"card {card_id} appears twice")
        if not isinstance(name, str) or not name:
            raise fail(f"card {card_id} has no name")
        attrs = {key: value for key, value in entry.items() if key not in ("id", "name")}
        cards[card_id] = Card(card_id, name, attrs)
    return cards


def load_catalog(folder: Path | None = None) -> dict[str, GameData]:
    """Every game file in `folder` (the shipped `seeds/` by default), by game name."""
    folder = folder or seeds_dir()
    catalog: dict[str, GameData] = {}
    for path in sorted(folder.glob("*.toml")):
        data = load_game_file(path)
        if data.game in catalog:
            raise DataError(f"{path}: game {data.game!r} is defined twice")
        catalog[data.game] = data
    return catalog
