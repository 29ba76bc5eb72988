"""The SPY card list, checked and indexed by colour once (`parse_rules`), and the fixed facts of a
Spy Base: the Exposure Target order, its labels and the answers about a card's type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from companion.games.catalog import Card, DataError, GameData

GAME = "spy"
# The Exposure Target order, as (kind, number): both Safes, then both Top Secrets, ascending.
EXPOSURE_ORDER: tuple[tuple[str, int], ...] = (("safe", 1), ("safe", 2), ("top-secret", 1), ("top-secret", 2))
# What the scoreboard calls each step of the exposure track (fixed labels, the same for every player).
EXPOSURE_LABELS: tuple[str, ...] = ("Safe 1", "Safe 2", "Top Secret 1", "Top Secret 2")
# What the owner says aloud about a card that is not the target: the type, never the number.
TYPE_ANSWERS: dict[str, str] = {"safe": "It's a Safe", "top-secret": "It's a Top Secret"}
KINDS = ("spy", "safe", "top-secret", "bomb")


@dataclass(frozen=True)
class Base:
    """One colour's cards, as the rules look them up."""

    spy: str
    exposure: tuple[str, ...]  # card ids in Exposure Target order
    bombs: tuple[str, ...]  # the bombs every game uses
    extra_bombs: tuple[str, ...]  # the bombs only a two-player game uses


@dataclass(frozen=True)
class SpyRules:
    """The SPY card list, checked and indexed by colour once (`parse_rules`)."""

    colours: tuple[str, ...]
    two_player_colours: tuple[str, ...]
    bases: Mapping[str, Base]


# A card's place in its colour's base: (kind, number, extra), e.g. ("bomb", 2, True).
CardKey = tuple[str, int | None, bool]


def parse_rules(data: GameData) -> SpyRules:
    """Check the SPY card list and index it by colour; raise `DataError` naming the first problem.

    Every colour needs exactly one Spy, Safe 1, Safe 2, Top Secret 1, Top Secret 2, Bomb 1 and
    Bomb 2; each two-player colour also exactly one extra Bomb 2, and no other colour any.
    """
    where = f"SPY data ({data.game})"
    colours = _colours(data.extra.get("colours"), where)
    two = _two_player_colours(data.extra.get("two_player_colours"), colours, where)
    if data.min_players < 2 or data.max_players > len(colours):
        raise DataError(f"{where}: players must be 2 to {len(colours)} (one colour each)")
    found: dict[str, dict[CardKey, str]] = {c: {} for c in colours}
    for card in data.cards.values():
        key = _card_key(card, colours, two, where)
        cards = found[card.get("colour")]
        if key in cards:
            raise DataError(
                f"{where}: {card.get('colour')} has two cards of the same kind: {cards[key]} and {card.id}"
            )
        cards[key] = card.id
    bases = {colour: _base(colour, cards, colour in two, where) for colour, cards in found.items()}
    return SpyRules(tuple(colours), tuple(two), MappingProxyType(bases))


def _colours(colours: Any, where: str) -> list[str]:
    if not (
        isinstance(colours, list)
        and colours
        and all(isinstance(c, str) and c for c in colours)
        and len(set(colours)) == len(colours)
    ):
        raise DataError(f"{where}: 'colours' must be a list of distinct colour names")
    return colours


def _two_player_colours(two: Any, colours: list[str], where: str) -> list[str]:
    if not (isinstance(two, list) and len(two) == 2 and len(set(two)) == 2 and set(two) <= set(colours)):
        raise DataError(f"{where}: 'two_player_colours' must name two different colours of 'colours'")
    return two


def _card_key(card: Card, colours: list[str], two: list[str], where: str) -> CardKey:
    """Where a card belongs in its colour's base; refuse a stray one."""
    colour, kind, number = card.get("colour"), card.get("kind"), card.get("number")
    if colour not in colours:
        raise DataError(f"{where}: card {card.id} has colour {colour!r}, not one of {colours}")
    if kind not in KINDS:
        raise DataError(f"{where}: card {card.id} has kind {kind!r}, not one of {list(KINDS)}")
    _check_number(card, kind, number, where)
    return kind, number, _extra(card, kind, number, colour, two, where)


def _check_number(card: Card, kind: str, number: Any, where: str) -> None:
    """A Spy has no number; every other card is number 1 or 2."""
    if kind == "spy" and number is not None:
        raise DataError(f"{where}: card {card.id} is a Spy and must have no number")
    if kind != "spy" and (isinstance(number, bool) or number not in (1, 2)):
        raise DataError(f"{where}: card {card.id} must have number 1 or 2")


def _extra(card: Card, kind: str, number: Any, colour: str, two: list[str], where: str) -> bool:
    """Whether the card is an extra bomb: only a Bomb 2 of a two-player colour may be."""
    extra = card.get("extra", False)
    if not isinstance(extra, bool) or (extra and (kind, number) != ("bomb", 2)):
        raise DataError(f"{where}: card {card.id}: only a Bomb 2 may be marked extra = true")
    if extra and colour not in two:
        raise DataError(f"{where}: card {card.id}: extra bombs belong only to the two-player colours {two}")
    return extra


def _base(colour: str, cards: dict[CardKey, str], two_player: bool, where: str) -> Base:
    """A colour's base, refused if a card is missing."""
    needed: list[CardKey] = [("spy", None, False), *((k, n, False) for k, n in EXPOSURE_ORDER)]
    needed += [("bomb", 1, False), ("bomb", 2, False)]
    if two_player:
        needed.append(("bomb", 2, True))
    missing = [key for key in needed if key not in cards]
    if missing:
        names = ", ".join(_describe(*key) for key in missing)
        raise DataError(f"{where}: {colour} lacks its {names}")
    return Base(
        spy=cards[("spy", None, False)],
        exposure=tuple(cards[(k, n, False)] for k, n in EXPOSURE_ORDER),
        bombs=(cards[("bomb", 1, False)], cards[("bomb", 2, False)]),
        extra_bombs=(cards[("bomb", 2, True)],) if two_player else (),
    )


def _describe(kind: str, number: int | None, extra: bool) -> str:
    label = {"spy": "Spy", "safe": "Safe", "top-secret": "Top Secret", "bomb": "Bomb"}[kind]
    label = label if number is None else f"{label} {number}"
    return f"extra {label}" if extra else label
