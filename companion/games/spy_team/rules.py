"""The Spy Team game data, checked and parsed once (`parse_rules`), and the rules that need no state:
a mission tile's two numbers (`parse_tile`) and the strongest card of a trick (`strongest`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeGuard

from companion.games.catalog import Card, DataError, GameData

GAME = "spy-team"
PLAYERS = 4
HAND = 11  # cards dealt to each player; 4 of the 48 sit out every round
TILE_TOTAL = 6  # both numbers of a mission tile add up to this
_TILE = re.compile(r"^(\d+)/(\d+)$")


@dataclass(frozen=True)
class SpyTeamRules:
    """The game data this engine plays, checked and parsed once (`parse_rules`)."""

    tiles: tuple[str, ...]  # the mission tiles each team starts with, in the data's order
    teams: tuple[tuple[str, tuple[int, int]], ...]  # (name, its two seats, lower first)


def parse_tile(tile: str) -> tuple[int, int]:
    """The two targets of a tile name such as ``"1/5"``; ValueError if it is not ``a/b``."""
    match = _TILE.match(tile)
    if match is None:
        raise ValueError(f'{tile!r} is not a mission tile like "1/5"')
    return int(match.group(1)), int(match.group(2))


def strongest(cards: list[Card]) -> tuple[int, bool]:
    """The index of the strongest of a trick's cards (in play order) and whether it is Camouflage.

    Normally the highest number of the lead card's colour wins; cards of the other colour never do.
    When all the cards share a colour (Camouflage), the lowest number wins instead. Numbers are unique
    within a colour, so there is never a tie.
    """
    lead = cards[0]["colour"]
    if all(card["colour"] == lead for card in cards):
        return min(range(len(cards)), key=lambda i: cards[i]["number"]), True
    in_colour = [i for i, card in enumerate(cards) if card["colour"] == lead]
    return max(in_colour, key=lambda i: cards[i]["number"]), False


def parse_rules(data: GameData) -> SpyTeamRules:
    """Refuse data this engine cannot play: it needs the 48 cards (two colours, 1 to 24 each),
    mission tiles ``a/b`` with a + b = 6, and two teams of two opposite seats."""
    where = f"game data for {data.game!r}"
    if data.game != GAME:
        raise DataError(f"{where}: this is not {GAME!r} data")
    if data.min_players != PLAYERS or data.max_players != PLAYERS:
        raise DataError(f"{where}: Spy Team is for exactly {PLAYERS} players")
    _check_cards(data, where)
    return SpyTeamRules(_tiles(data.extra.get("tiles"), where), _teams(data.extra.get("teams"), where))


def _check_cards(data: GameData, where: str) -> None:
    """Two colours of 24 cards each, numbered 1 to 24, each id saying its colour and number."""
    by_colour: dict[str, set[int]] = {}
    for card in data.cards.values():
        colour, number = _colour_and_number(card, data.game, where)
        by_colour.setdefault(colour, set()).add(number)  # ids are unique, so no duplicates here
    if len(data.cards) != 48 or len(by_colour) != 2:
        raise DataError(
            f"{where}: there must be 48 cards in 2 colours, not {len(data.cards)} in {len(by_colour)}"
        )
    for colour, numbers in by_colour.items():
        if numbers != set(range(1, 25)):
            raise DataError(f"{where}: the {colour} cards must be numbered 1 to 24 exactly once")


def _colour_and_number(card: Card, game: str, where: str) -> tuple[str, int]:
    """One card's colour and number, refused unless its id is ``<game>/<colour>-<number>``."""
    colour, number = card.get("colour"), card.get("number")
    if not isinstance(colour, str) or not colour:
        raise DataError(f"{where}: card {card.id} has no colour")
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 24:
        raise DataError(f"{where}: card {card.id} needs a number from 1 to 24")
    if card.id != f"{game}/{colour}-{number}":
        raise DataError(f"{where}: card {card.id} says it is {colour} {number}; its id must match")
    return colour, number


def _tiles(tiles: Any, where: str) -> tuple[str, ...]:
    if not isinstance(tiles, list) or not tiles or not all(isinstance(t, str) for t in tiles):
        raise DataError(f'{where}: \'tiles\' must be a list of mission tiles such as ["1/5", "2/4", "3/3"]')
    shapes: set[tuple[int, int]] = set()
    for tile in tiles:
        a, b = _tile(tile, where)
        shape = (min(a, b), max(a, b))
        if shape in shapes:
            raise DataError(f"{where}: mission tile {tile!r} appears twice")
        shapes.add(shape)
    return tuple(tiles)


def _tile(tile: str, where: str) -> tuple[int, int]:
    """A tile's two numbers, refused unless both are at least 1 and add up to 6."""
    try:
        a, b = parse_tile(tile)
    except ValueError as error:
        raise DataError(f"{where}: {error}") from None
    if a < 1 or b < 1 or a + b != TILE_TOTAL:
        raise DataError(f"{where}: mission tile {tile!r} must be two numbers of at least 1 adding up to 6")
    return a, b


def _teams(teams: Any, where: str) -> tuple[tuple[str, tuple[int, int]], ...]:
    if not isinstance(teams, list) or len(teams) != 2:
        raise DataError(f"{where}: there must be exactly two [[teams]]")
    parsed: list[tuple[str, tuple[int, int]]] = []
    for team in teams:
        name, seats = _team(team, where)
        if name in (n for n, _ in parsed):
            raise DataError(f"{where}: each team needs its own name")
        parsed.append((name, seats))
    if {s for _, seats in parsed for s in seats} != set(range(PLAYERS)):
        raise DataError(f"{where}: the two teams must cover seats 0 to 3 between them")
    return tuple(parsed)


def _team(team: Any, where: str) -> tuple[str, tuple[int, int]]:
    name = team.get("name") if isinstance(team, dict) else None
    seats = team.get("seats") if isinstance(team, dict) else None
    if not isinstance(name, str) or not name:
        raise DataError(f"{where}: each team needs its own name")
    if not _two_seats(seats):
        raise DataError(f"{where}: team {name} needs two seats")
    if abs(seats[0] - seats[1]) != 2:  # teammates never sit side by side
        raise DataError(f"{where}: team {name} must sit opposite each other: seats 0 and 2, or 1 and 3")
    return name, (min(seats), max(seats))


def _two_seats(seats: Any) -> TypeGuard[list[int]]:
    """Whether `seats` is a list of two seat numbers (whole numbers, not booleans)."""
    return (
        isinstance(seats, list)
        and len(seats) == 2
        and all(isinstance(s, int) and not isinstance(s, bool) for s in seats)
    )
