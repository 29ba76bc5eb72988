"""The state of a game of Spy Team, and the questions the engine and the view ask of it (whose team a
seat plays for, whose turn it is, each seat's target).

Plain dataclasses: the base class deep-copies them before every event, and equality compares them
field by field, which the tests use to prove a refused input changed nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from companion.games.base import Status
from companion.games.spy_team.rules import PLAYERS, parse_tile

# How a round ends: the team that completes its mission does so by its own tricks, or by the rival's
# sabotage.
RoundOutcome = Literal["accomplished", "sabotaged"]


@dataclass
class Mission:
    """A team's choice for the round: the tile and each teammate's target (seat -> tricks)."""

    tile: str
    targets: dict[int, int]


@dataclass
class Team:
    """One team: its seats (opposite each other), its tiles and this round's mission, if chosen."""

    name: str
    seats: tuple[int, int]
    tiles_left: list[str]
    tiles_removed: list[str] = field(default_factory=list)
    mission: Mission | None = None
    pick: int = 0  # which of `choices(team)` the seat buttons show now, stepped by a press


@dataclass
class Play:
    """One card on the table: who played it."""

    seat: int
    card: str


@dataclass
class TrickResult:
    """A finished trick, kept for the scoreboard."""

    round: int
    cards: list[Play]
    winner: int
    camouflage: bool


@dataclass
class RoundResult:
    """A finished round: the team that completed its mission, and why; each seat's tricks and target
    and each team's mission tile (by team), so the board can still show the round once the next began."""

    round: int
    team: str
    winners: list[int]
    tile: str
    outcome: RoundOutcome
    reason: str
    tricks_won: list[int]
    targets: list[int | None] = field(default_factory=list)
    missions: list[str | None] = field(default_factory=list)


@dataclass
class SpyTeamState:
    """Everything the companion knows about a game of Spy Team.

    `trick` holds the cards of the trick in progress in play order; `played` every card id played this
    round (the trick in progress included), so a card tapped twice is caught. `tricks_won` is per seat
    and per round. `last_trick` survives into the next round so the board can still show the trick
    that decided the previous one.
    """

    players: list[str]
    teams: list[Team]
    round: int = 1
    start_seat: int = 0
    leader: int = 0
    trick: list[Play] = field(default_factory=list)
    played: list[str] = field(default_factory=list)
    tricks_won: list[int] = field(default_factory=lambda: [0] * PLAYERS)
    last_trick: TrickResult | None = None
    rounds: list[RoundResult] = field(default_factory=list)
    status: Status = Status.PLAYING
    winners: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the story, trick by trick (`told` cues)


def team_of(state: SpyTeamState, seat: int) -> int:
    """The index in `state.teams` of the team that seat plays for."""
    return next(i for i, team in enumerate(state.teams) if seat in team.seats)


def teammate(state: SpyTeamState, seat: int) -> int:
    """The seat of `seat`'s partner."""
    a, b = state.teams[team_of(state, seat)].seats
    return b if seat == a else a


def pair(state: SpyTeamState, team: Team) -> str:
    """The team's two players: ``"Ann and Cid"``."""
    a, b = team.seats
    return f"{state.players[a]} and {state.players[b]}"


def choices(team: Team) -> list[tuple[str, int]]:
    """The team's legal missions in order, as (tile, the target of the team's first seat): each tile
    it has left, each distinct way round (``3/3`` has one)."""
    return [(tile, target) for tile in team.tiles_left for target in dict.fromkeys(parse_tile(tile))]


def picked(team: Team) -> tuple[str, int]:
    """The mission the team's seat buttons show now: the one a held seat button settles."""
    options = choices(team)
    return options[team.pick % len(options)]


def browsing(team: Team) -> bool:
    """Whether the team's seat buttons show something other than its mission (none yet included)."""
    if team.mission is None:
        return True
    return picked(team) != (team.mission.tile, team.mission.targets[team.seats[0]])


def waiting(state: SpyTeamState) -> list[str]:
    """The names of the teams that have not chosen this round's mission yet."""
    return [team.name for team in state.teams if team.mission is None]


def missions_ready(state: SpyTeamState) -> bool:
    """Whether both teams have chosen a mission this round."""
    return all(team.mission is not None for team in state.teams)


def turn(state: SpyTeamState) -> int | None:
    """The seat expected to play a card, or None (missions missing, or the game is over)."""
    if state.status is not Status.PLAYING or not missions_ready(state):
        return None
    return (state.leader + len(state.trick)) % PLAYERS


def targets(state: SpyTeamState) -> list[int | None]:
    """Each seat's target this round (None until its team chose)."""
    result: list[int | None] = [None] * PLAYERS
    for team in state.teams:
        if team.mission is not None:
            for seat, target in team.mission.targets.items():
                result[seat] = target
    return result
