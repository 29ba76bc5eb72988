"""What the table sees of a game of SPY: the prompt and the public view (the scoreboard).

No hidden number: the view says how many cards of each exposure track are face up (the order is
fixed, so that says which), how many bombs are lit but never which, and the outcomes as recorded,
which never name a secret card.
"""

from __future__ import annotations

from typing import Any

from companion.games.base import Action, Outcome, Prompt, Status, with_story
from companion.games.spy.rules import EXPOSURE_LABELS, GAME, SpyRules
from companion.games.spy.state import SpyState, allowed_colours, winner_text


def prompt(rules: SpyRules, state: SpyState) -> Prompt:
    """What the table expects next: a colour claimed, a spy or a pass, or nothing once it is over."""
    if state.status is Status.SETUP:
        seat = state.colours.index(None)
        name = state.players[seat]
        free = [c for c in allowed_colours(rules, state) if c not in state.colours]
        claims = tuple(
            Action("claim", f"{name} plays {c}", {"seat": seat, "colour": c}, seat=seat) for c in free
        )
        return Prompt(f"{name}: tap the Spy card of your colour", seat, True, claims)
    if state.status is Status.PLAYING:
        assert state.turn is not None
        name = state.players[state.turn]
        actions = [Action("pass", f"{name} passes (end the turn)", primary=True)]
        actions += [
            Action("eliminate", f"{state.players[s]} dropped a card", {"seat": s}, seat=s, confirm=True)
            for s in range(len(state.players))
            if not state.eliminated[s]
        ]
        text = f"{name}'s turn: spy (the owner taps the card) or pass"
        return Prompt(text, state.turn, True, tuple(actions))
    return Prompt(f"Game over: {winner_text(state)}")


def public_view(rules: SpyRules, state: SpyState, outcome: Outcome | None) -> dict[str, Any]:
    """The scoreboard: colours, exposure tracks, lit-bomb counts, outcomes. No hidden number."""
    view = {
        "game": GAME,
        "status": state.status.value,
        "round": 1,
        "players": [_player_view(state, seat) for seat in range(len(state.players))],
        "prompt": prompt(rules, state).to_json(),
        "rounds": [],
        "winners": list(state.winners),
        "turn": state.turn,
        "start": state.start,
        "last_outcome": _copy(state.last_outcome),
    }
    return with_story(view, state.log, outcome)


def _player_view(state: SpyState, seat: int) -> dict[str, Any]:
    exposed = state.exposed[seat]
    out = state.eliminated[seat]
    return {
        "seat": seat,
        "name": state.players[seat],
        "score": 1 if seat in state.winners else 0,
        "eliminated": out,
        "colour": state.colours[seat],
        # Fixed labels in a fixed order: only how many are face up depends on play.
        "exposure": [{"card": label, "revealed": i < exposed} for i, label in enumerate(EXPOSURE_LABELS)],
        "next": None if out or exposed >= len(EXPOSURE_LABELS) else exposed,
        "bombs_lit": len(state.lit[seat]),
        "bombs": 3 if len(state.players) == 2 else 2,
        "last_outcome": _copy(state.outcomes[seat]),
    }


def _copy(outcome: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if outcome is None else dict(outcome)
