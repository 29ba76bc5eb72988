"""The game data of Mission for Peanuts (seeds/peanuts.toml), checked and parsed once.

`parse_rules` reads the roles, the cards (notches = copies of the role), the combinations, the
target points and the small-table Assassin into a frozen `PeanutsRules`, or raises `DataError`
naming what is wrong. Nothing here changes once the engine is built.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from companion.games.catalog import Card, DataError, GameData

ROLE_IDS = ("spy", "telepath", "assassin", "seer", "informant", "handler", "agent", "secret-police")
FAMILY = ("spy", "telepath", "assassin")

# What a Role protects its holder from while it is their Role. The threats are named after what an
# action does to the player it picks: "trade" and "discard" a hand, "assassin" (receiving it), and
# being picked by the "secret-police".
IMMUNE_TO: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "telepath": frozenset({"assassin"}),
        "assassin": frozenset({"trade", "discard"}),
        "secret-police": frozenset({"secret-police"}),
    }
)


@dataclass(frozen=True)
class Combination:
    """Two roles that score together at the showdown; the lower the rank, the better."""

    rank: int
    roles: frozenset[str]
    name: str  # the two role names joined by a multiplication sign


@dataclass(frozen=True)
class PeanutsRules:
    """Everything the engine reads from the game data, parsed once."""

    cards: Mapping[str, Card]
    role_names: Mapping[str, str]
    combos: tuple[Combination, ...]
    targets: Mapping[int, int]  # player count -> Peanut Points that win
    small_table: int  # at most this many players: an Assassin is set aside
    set_aside_card: str | None

    def role(self, card_id: str) -> str:
        return str(self.cards[card_id]["role"])

    def notches(self, card_id: str) -> int:
        return int(self.cards[card_id]["notches"])

    def name(self, card_id: str) -> str:
        return self.cards[card_id].name

    def sets_aside(self, players: int) -> bool:
        return self.set_aside_card is not None and players <= self.small_table

    def deck_size(self, players: int) -> int:
        """Cards in the deck right after the deal, for a table of `players`."""
        return len(self.cards) - (1 if self.sets_aside(players) else 0) - 2 * players

    def combination(self, first: str, second: str) -> tuple[int, str] | None:
        """The combination two cards make (in either order), as (rank, name), or None."""
        pair = frozenset({self.role(first), self.role(second)})
        return next(((c.rank, c.name) for c in self.combos if c.roles == pair), None)


def parse_rules(data: GameData) -> PeanutsRules:
    """Check the data and parse it; raise `DataError` naming the first problem."""
    where = f"Mission for Peanuts data ({data.game})"
    role_names = _role_names(data.extra.get("roles"), where)
    copies = _copies(data, where)
    combos = _combinations(data.extra.get("combinations"), role_names, where)
    targets = _targets(data, where)
    small_table, set_aside = _small_table(data, copies, where)
    rules = PeanutsRules(
        cards=MappingProxyType(dict(data.cards)),
        role_names=MappingProxyType(role_names),
        combos=combos,
        targets=MappingProxyType(targets),
        small_table=small_table,
        set_aside_card=set_aside,
    )
    _check_deal(data, rules, copies, where)
    return rules


def _role_names(roles: Any, where: str) -> dict[str, str]:
    if not isinstance(roles, list) or not all(isinstance(r, dict) for r in roles):
        raise DataError(f"{where}: 'roles' must be a list of [[roles]] tables")
    if sorted(str(r.get("id")) for r in roles) != sorted(ROLE_IDS):
        raise DataError(f"{where}: 'roles' must define exactly these roles: {', '.join(ROLE_IDS)}")
    names: dict[str, str] = {}
    for entry in roles:
        if not isinstance(entry.get("name"), str) or not entry["name"]:
            raise DataError(f"{where}: role {entry['id']} has no name")
        names[entry["id"]] = entry["name"]
    return names


def _copies(data: GameData, where: str) -> Counter[str]:
    """How many cards each role has; every card's notches must say the same."""
    copies = Counter(str(card.get("role")) for card in data.cards.values())
    for card in data.cards.values():
        if card.get("role") not in ROLE_IDS:
            raise DataError(f"{where}: card {card.id} has no valid 'role'")
        notches = card.get("notches")
        if isinstance(notches, bool) or notches != copies[card["role"]]:
            raise DataError(
                f"{where}: card {card.id}: 'notches' must equal the number of {card['role']} cards "
                f"({copies[card['role']]})"
            )
    for role in ROLE_IDS:
        if copies[role] < 1:
            raise DataError(f"{where}: there is no {role} card")
    return copies


def _combination(entry: Any) -> tuple[int, list[str]] | None:
    """(rank, roles) of a well-formed [[combinations]] entry, else None."""
    pair = entry.get("roles") if isinstance(entry, dict) else None
    rank = entry.get("rank") if isinstance(entry, dict) else None
    if not isinstance(pair, list) or len(pair) != 2 or len(set(pair)) != 2 or not set(pair) <= set(ROLE_IDS):
        return None
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        return None
    return rank, pair


def _combinations(entries: Any, role_names: Mapping[str, str], where: str) -> tuple[Combination, ...]:
    if not isinstance(entries, list) or not entries:
        raise DataError(f"{where}: there must be at least one [[combinations]] entry")
    combos: list[Combination] = []
    for entry in entries:
        parsed = _combination(entry)
        if parsed is None:
            raise DataError(
                f"{where}: each [[combinations]] needs 'rank' >= 1 and 'roles' = two different roles"
            )
        rank, pair = parsed
        if any(c.roles == frozenset(pair) for c in combos):
            raise DataError(f"{where}: the combination {' x '.join(pair)} appears twice")
        name = " \N{MULTIPLICATION SIGN} ".join(role_names[r] for r in pair)
        combos.append(Combination(rank, frozenset(pair), name))
    return tuple(combos)


def _targets(data: GameData, where: str) -> dict[int, int]:
    targets = data.extra.get("target_points")
    if not isinstance(targets, dict):
        raise DataError(f"{where}: 'target_points' must map each player count to the points that win")
    parsed: dict[int, int] = {}
    for players in range(data.min_players, data.max_players + 1):
        points = targets.get(str(players))
        if isinstance(points, bool) or not isinstance(points, int) or points < 1:
            raise DataError(f"{where}: 'target_points' has no whole number >= 1 for {players} players")
        parsed[players] = points
    return parsed


def _small_table(data: GameData, copies: Counter[str], where: str) -> tuple[int, str | None]:
    """(players_at_most, the Assassin set aside); without [small_table], no table sets one aside."""
    small = data.extra.get("small_table", {})
    if not isinstance(small, dict):
        raise DataError(f"{where}: 'small_table' must be a table")
    at_most = small.get("players_at_most", 0)
    if isinstance(at_most, bool) or not isinstance(at_most, int):
        raise DataError(f"{where}: 'small_table.players_at_most' must be a whole number")
    if at_most < data.min_players:
        return at_most, None
    card = data.cards.get(str(small.get("set_aside")))
    if card is None or card["role"] != "assassin":
        raise DataError(f"{where}: 'small_table.set_aside' must be the id of an Assassin card")
    if copies["assassin"] < 2:
        raise DataError(f"{where}: setting an Assassin aside needs at least two Assassins")
    return at_most, card.id


def _check_deal(data: GameData, rules: PeanutsRules, copies: Counter[str], where: str) -> None:
    """Every table size must leave a real deck after the deal."""
    if data.min_players < 2:
        raise DataError(f"{where}: the game needs at least 2 players")
    for players in range(data.min_players, data.max_players + 1):
        in_play = len(data.cards) - (1 if rules.sets_aside(players) else 0)
        dealable = in_play - copies["spy"]  # the Spy is never dealt
        if dealable < 2 * players or in_play - 2 * players < players:
            raise DataError(
                f"{where}: {len(data.cards)} cards are too few to deal {players} players and keep a deck"
            )
