"""A turn of Mission for Peanuts: the draw that begins it, then the card played, used for its ASSIST
(discarded face up) or its DEPLOY (the new Role, the old one discarded). What the Role's action then
queues is answered in `companion.games.peanuts.roles`; when the queue is empty the turn ends
(`companion.games.peanuts.rounds.end_turn`).
"""

from __future__ import annotations

from companion.core.cues import Cue
from companion.games.base import Event, GameError
from companion.games.peanuts.moves import Scorekeeper, discard_face_up, draw_card, expect, run, unplaced
from companion.games.peanuts.roles import ASSIST, DEPLOY
from companion.games.peanuts.rules import PeanutsRules
from companion.games.peanuts.state import PeanutsState, Step


def on_draw(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    """The draw that begins the turn: `draw` (Next), or implied by the turn's first tap (a play)."""
    expect(keeper.rules, state, step, event, "draw", "tap")
    draw_card(state, cues)
    if event["type"] == "tap":
        on_act(keeper, state, state.steps[0], event, cues)


def on_act(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    """The card played: its tap, then its ASSIST (`assist`, Next) or its DEPLOY (`deploy`, or a
    tap of the player's own Role, before or after the card)."""
    expect(keeper.rules, state, step, event, "tap", "assist", "deploy")
    if event["type"] == "tap":
        on_play_tap(keeper, state, step, event, cues)
        return
    card_id = step.info.get("card")
    if card_id is None:
        raise GameError("First tap the card you play.")
    play(keeper.rules, state, card_id, event["type"], cues)


def on_play_tap(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    """A tap in `act`. The player's own Role: DEPLOY the card tapped before, or the next one (the
    Role again: not a DEPLOY after all). Another card: the card played, or the new Role."""
    seat, name = state.turn, state.players[state.turn]
    card = keeper.card(event)
    if card.id == state.roles[seat]:
        if "card" in step.info:
            play(keeper.rules, state, step.info["card"], "deploy", cues)
            return
        step.info["deploy"] = not step.info.get("deploy", False)
        text = (
            f"{name} deploys a new Role: the {card.name} goes to the discard pile."
            if step.info["deploy"]
            else f"{name} keeps the {card.name} as their Role."
        )
        cues.append(Cue("card-accepted", seat, text))
        return
    card = unplaced(keeper, state, event)
    if step.info.get("deploy"):
        play(keeper.rules, state, card.id, "deploy", cues)
        return
    step.info["card"] = card.id
    cues.append(Cue("card-accepted", seat, f"{name} plays the {card.name}."))


def play(rules: PeanutsRules, state: PeanutsState, card_id: str, how: str, cues: list[Cue]) -> None:
    """The card leaves the hand for its ASSIST or its DEPLOY."""
    seat = state.turn
    state.steps.pop(0)
    state.hands[seat] -= 1
    if how == "assist":
        assist(rules, state, seat, card_id, cues)
    else:
        deploy(rules, state, seat, card_id, cues)


def assist(rules: PeanutsRules, state: PeanutsState, seat: int, card_id: str, cues: list[Cue]) -> None:
    """The card played goes face up to the pile, then its Role's ASSIST."""
    discard_face_up(rules, state, seat, card_id, cues)
    text = f"{state.players[seat]} discards the {rules.name(card_id)} for its ASSIST."
    cues.append(Cue("card-accepted", seat, text, {"card": card_id}))
    run(ASSIST, rules, rules.role(card_id), state, seat, cues)


def deploy(rules: PeanutsRules, state: PeanutsState, seat: int, card_id: str, cues: list[Cue]) -> None:
    """The card played becomes the Role, the old Role goes face up to the pile, then the DEPLOY."""
    old = state.roles[seat]
    assert old is not None
    state.roles[seat] = card_id
    discard_face_up(rules, state, seat, old, cues)
    text = f"{state.players[seat]} deploys the {rules.name(card_id)} as their Role."
    cues.append(Cue("card-revealed", seat, text, {"card": card_id}))
    run(DEPLOY, rules, rules.role(card_id), state, seat, cues)
