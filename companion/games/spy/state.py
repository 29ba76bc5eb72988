"""The state of a game of SPY, secrets included, and the questions the engine and the view ask of it
(the colours in play, the next player still in, who won)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from companion.games.base import Status
from companion.games.spy.rules import SpyRules


@dataclass
class SpyState:
    """The whole game, secrets included (the lit bombs). Only `Spy.public_view` leaves the engine.

    `exposed[seat]` counts how many cards of the seat's exposure order are face up: the order is
    fixed, so the count says which ones. `lit[seat]` holds the ids of the seat's lit bombs, which
    the public view reduces to a number.
    """

    players: list[str]
    start: int
    status: Status = Status.SETUP
    colours: list[str | None] = field(default_factory=list)
    picked: int = 0  # setup: which free colour the seat buttons show (`free_colours`), stepped by a press
    turn: int | None = None
    eliminated: list[bool] = field(default_factory=list)
    exposed: list[int] = field(default_factory=list)
    lit: list[list[str]] = field(default_factory=list)
    last_outcome: dict[str, Any] | None = None
    outcomes: list[dict[str, Any] | None] = field(default_factory=list)  # the last one per seat
    winners: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the story: public sentences only, never a number


def allowed_colours(rules: SpyRules, state: SpyState) -> tuple[str, ...]:
    """The colours this table may claim: a two-player game has its own two."""
    return rules.two_player_colours if len(state.players) == 2 else rules.colours


def free_colours(rules: SpyRules, state: SpyState) -> list[str]:
    """The colours still free to claim, in the rulebook's order."""
    return [c for c in allowed_colours(rules, state) if c not in state.colours]


def picked_colour(rules: SpyRules, state: SpyState) -> str:
    """The free colour the seat buttons show now: the one a held seat button claims."""
    free = free_colours(rules, state)
    return free[state.picked % len(free)]


def next_alive(state: SpyState, seat: int) -> int:
    """The next seat clockwise after `seat` that is still in the game."""
    count = len(state.players)
    for step in range(1, count + 1):
        candidate = (seat + step) % count
        if not state.eliminated[candidate]:
            return candidate
    raise AssertionError("no player left")  # the last elimination ends the game before this can happen


def winner_text(state: SpyState) -> str:
    """``"Ann won"``: who won the game."""
    return " and ".join(state.players[s] for s in state.winners) + " won"
