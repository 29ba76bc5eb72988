"""What the table sees of a game of SPY: the prompt and the public view (the scoreboard).

No hidden number: the view says how many cards of each exposure track are face up (the order is
fixed, so that says which), how many bombs are lit but never which, and the outcomes as recorded,
which never name a secret card.
"""

from __future__ import annotations

from typing import Any

from companion.games.base import Action, Outcome, Prompt, Status, with_story
from companion.games.spy.rules import EXPOSURE_LABELS, GAME, SpyRules
from companion.games.spy.state import SpyState, free_colours, picked_colour, winner_text


def prompt(rules: SpyRules, state: SpyState) -> Prompt:
    """What the table expects next: a colour claimed, a spy or a pass, or nothing once it is over.

    At the table (docs/rules/spy.md): in setup the asked seat taps its Spy card, or presses its seat
    button to step through the free colours and holds it to claim the one shown; in play the owner
    taps the spied card, Next passes, and a player who dropped a card holds their own seat button.
    """
    if state.status is Status.SETUP:
        return _setup_prompt(rules, state)
    if state.status is Status.PLAYING:
        assert state.turn is not None
        name = state.players[state.turn]
        actions = [Action("pass", f"{name} passes (end the turn)", primary=True)]
        actions += [
            Action(
                "eliminate",
                f"{state.players[s]} dropped a card",
                {"seat": s},
                seat=s,
                confirm=True,
                hold=True,
            )
            for s in range(len(state.players))
            if not state.eliminated[s]
        ]
        text = (
            f"{name}'s turn: spy (the owner taps the card) or press Next to pass. "
            "Dropped a card? Hold your seat button"
        )
        return Prompt(text, state.turn, True, tuple(actions))
    return Prompt(f"Game over: {winner_text(state)}")


def _setup_prompt(rules: SpyRules, state: SpyState) -> Prompt:
    """The first seat without a colour: its Spy card, or its seat button (press: the next colour,
    hold: claim the one shown). The tablet offers every free colour at once."""
    seat = state.colours.index(None)
    name = state.players[seat]
    shown = picked_colour(rules, state)
    free = free_colours(rules, state)
    claims = [
        Action(
            "claim",
            f"{name} plays {c}",
            {"seat": seat, "colour": c},
            seat=seat,
            hold=c == shown,
            button=c == shown,
        )
        for c in free
    ]
    if len(free) > 1:
        claims.append(Action("pick", "Show the next colour", {"seat": seat}, seat=seat, tablet=False))
    others = " (press it for another colour)" if len(free) > 1 else ""
    text = f"{name}: tap the Spy card of your colour, or hold your seat button to play {shown}{others}"
    return Prompt(text, seat, True, tuple(claims))


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
        "last_out": _last_out(state),
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
        "out_reason": out_reason(state, seat),
    }


def out_reason(state: SpyState, seat: int) -> str | None:
    """Why `seat` is out, from what the whole table saw (None while in): the last outcome a player
    was part of is the one that put them out, as nothing can concern them afterwards."""
    if not state.eliminated[seat]:
        return None
    last = state.outcomes[seat] or {}
    if last.get("kind") == "boom" and last.get("spier") == seat:
        return f"BOOM: spied a lit bomb in {state.players[last['owner']]}'s base"
    if last.get("kind") == "dropped":
        return "dropped a card"
    if state.exposed[seat] >= len(EXPOSURE_LABELS):
        return "base exposed: all four cards face up"
    return "out"


def _last_out(state: SpyState) -> dict[str, Any] | None:
    """The player the latest outcome put out, and why (the board's headline until the next input)."""
    last = state.last_outcome
    if last is None:
        return None
    seat = last["spier"] if last["kind"] == "boom" else last["owner"]
    if seat is None or not state.eliminated[seat] or state.outcomes[seat] != last:
        return None
    return {"seat": seat, "name": state.players[seat], "reason": out_reason(state, seat)}


def _copy(outcome: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if outcome is None else dict(outcome)
