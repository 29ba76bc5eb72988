"""Ratings for the league: who is strongest, per game and across all games, with openskill's
Plackett-Luce model (docs/mqtt.md, "Ratings").

Each finished game is one match, read off what its result carries (seats, names, final scores,
winners). Spy Team is two teams: the winning pair against the other pair. SPY and Mission for
Peanuts are free-for-all: the winners first, then the others by their final score (Peanut Points),
equal scores tied; SPY's result says only who won, so the others share second place. A game of
another game (a pack) is rated as free-for-all the same way.

Games are rated in the order they were played (`started_at`, then the result id), never in the
order they arrived, and a game counts once (by its table and game id): a repeated result changes
nothing and a late one takes its own place, as every call rates the whole list again. A player is
known by name, case and spaces aside (`player_key`), as the standings and the history know them.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating

MODEL = "Plackett-Luce (openskill)"
TEAM_GAMES = frozenset({"spy-team"})  # the winners are one side, the other players the other
Z = 3  # the shown rating is mu - Z sigma


def player_name(name: object) -> str:
    """A player's name as shown: spaces around it dropped."""
    return str(name or "").strip()


def player_key(name: object) -> str:
    """Who a name is, wherever it was typed: "Ann", "ann " and "ANN" are one player."""
    return player_name(name).casefold()


class Unrated(ValueError):
    """A finished game that cannot be rated; the message says why."""


@dataclass(frozen=True)
class Match:
    """One rated game: its sides (player keys) and their ranks (1 is best, equal ranks tie)."""

    id: str
    game: str
    teams: tuple[tuple[str, ...], ...]
    ranks: tuple[int, ...]
    names: dict[str, str]  # key -> the name as this game spelt it


def match_of(result: dict[str, Any]) -> Match:
    """The match a game's result describes; Unrated if it cannot be one."""
    players = list(result.get("players") or [])
    names = _names(players)
    winners = set(result.get("winners") or [])
    seats = [(player_key(p.get("name")), p.get("seat") in winners, _score(p)) for p in players]
    if result.get("game") in TEAM_GAMES:
        teams, ranks = _two_sides(seats)
    else:
        teams, ranks = _free_for_all(seats)
    return Match(str(result.get("id")), str(result.get("game")), teams, ranks, names)


def _names(players: list[dict[str, Any]]) -> dict[str, str]:
    names = {player_key(p.get("name")): player_name(p.get("name")) for p in players}
    if len(players) < 2:
        raise Unrated("fewer than two players")
    if "" in names:
        raise Unrated("a player has no name")
    if len(names) < len(players):
        raise Unrated("one name at two seats")
    return names


Seat = tuple[str, bool, int]  # a player's key, whether their seat won, their final score
Sides = tuple[tuple[tuple[str, ...], ...], tuple[int, ...]]


def _two_sides(seats: list[Seat]) -> Sides:
    """The winners as one side ahead of the other players."""
    won = tuple(key for key, win, _ in seats if win)
    lost = tuple(key for key, win, _ in seats if not win)
    if not won or not lost:
        raise Unrated("no winning side" if not won else "no losing side")
    return (won, lost), (1, 2)


def _free_for_all(seats: list[Seat]) -> Sides:
    """Each player alone: the winners first, then by final score; equal places tie."""
    places = sorted({(not win, -score) for _, win, score in seats})
    ranks = tuple(places.index((not win, -score)) + 1 for _, win, score in seats)
    return tuple((key,) for key, _, _ in seats), ranks


def _score(player: dict[str, Any]) -> int:
    score = player.get("score")
    return score if isinstance(score, int) and not isinstance(score, bool) else 0


def _instant(result: dict[str, Any]) -> datetime | None:
    """When a game started, as an instant (a time without an offset is the league's local time);
    None if its start is not a time."""
    try:
        return datetime.fromisoformat(str(result.get("started_at"))).astimezone()
    except (ValueError, OverflowError):
        return None


def played_key(result: dict[str, Any]) -> tuple[datetime, str]:
    """Where a game goes in played order: by its start as an instant (tables' clocks may have other
    offsets, so not by the text), then by its id; a start that is not a time goes last."""
    return _instant(result) or datetime.max.replace(tzinfo=UTC), str(result.get("id"))


def played_order(results: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The games once each (by table and game id, the last version given winning), in the order they
    were played; and those left out for a start time that is not one."""
    once: dict[tuple[str, str], dict[str, Any]] = {}
    for result in results:
        once[(str(result.get("table")), str(result.get("game_id", result.get("id"))))] = result
    timed = [result for result in once.values() if _instant(result) is not None]
    bad = [_left_out(r, "its start time is not a time") for r in once.values() if _instant(r) is None]
    return sorted(timed, key=played_key), bad


def _left_out(result: dict[str, Any], reason: str) -> dict[str, Any]:
    return {
        "id": result.get("id"),
        "table": result.get("table"),
        "game": result.get("game"),
        "reason": reason,
    }


class Ladder:
    """Ratings of one pool (one game, or all games), folded match by match in played order. `names`
    (key -> shown name) may be shared by the pools, so a player is spelt one way on every one."""

    def __init__(self, model: PlackettLuce, names: dict[str, str]) -> None:
        self.model = model
        self.ratings: dict[str, PlackettLuceRating] = {}
        self.names = names
        self.played: dict[str, int] = {}
        self.games = 0

    def add(self, match: Match) -> None:
        teams = [[self._rating(key) for key in team] for team in match.teams]
        rated = self.model.rate(teams, ranks=[float(rank) for rank in match.ranks])
        for team, new in zip(match.teams, rated, strict=True):
            for key, rating in zip(team, new, strict=True):
                self.ratings[key] = rating
                self.names.setdefault(key, match.names[key])  # the first spelling seen stays
                self.played[key] = self.played.get(key, 0) + 1
        self.games += 1

    def _rating(self, key: str) -> PlackettLuceRating:
        return self.ratings[key] if key in self.ratings else self.model.rating()

    def rows(self) -> list[dict[str, Any]]:
        """Best first: by the shown rating, then the estimate, then the name."""
        rows = [
            {
                "player": self.names[key],
                "rating": rating.ordinal(z=Z),
                "mu": rating.mu,
                "sigma": rating.sigma,
                "played": self.played[key],
            }
            for key, rating in self.ratings.items()
        ]
        return sorted(rows, key=lambda r: (-r["rating"], -r["mu"], player_key(r["player"])))


def ratings(results: list[dict[str, Any]], titles: dict[str, str] | None = None) -> dict[str, Any]:
    """The league's ratings from its finished games' results (any order, repeats allowed): across
    all games, per game, and the games left out with the reason."""
    model = PlackettLuce()  # openskill's defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300
    names: dict[str, str] = {}
    overall, per_game = Ladder(model, names), dict[str, Ladder]()
    ordered, left_out = played_order(results)
    for result in ordered:
        try:
            match = match_of(result)
        except Unrated as why:
            left_out.append(_left_out(result, str(why)))
            continue
        overall.add(match)
        per_game.setdefault(match.game, Ladder(model, names)).add(match)
    return {
        "model": MODEL,
        "z": Z,
        "overall": {"games": overall.games, "players": overall.rows()},
        "games": [
            {
                "game": game,
                "title": (titles or {}).get(game, game),
                "games": ladder.games,
                "players": ladder.rows(),
            }
            for game, ladder in sorted(per_game.items())
        ],
        "left_out": left_out,
    }
