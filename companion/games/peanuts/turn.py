"""A turn of Mission for Peanuts: the draw that begins it, then the card played, used for its ASSIST
(discarded face up) or its DEPLOY (the new Role, the old one discarded). What the Role's action then
queues is answered in `companion.games.peanuts.roles`; when the queue is empty the turn ends
(`companion.games.peanuts.rounds.end_turn`).
"""

from __future__ import annotations

from companion.core.cues import Cue
from companion.games.base import Event, GameError
from companion.games.peanuts.moves import Scorekeeper, discard_face_up, expect, run, unplaced
from companion.games.peanuts.roles import ASSIST, DEPLOY
from companion.games.peanuts.rules import PeanutsRules
from companion.games.peanuts.state import PeanutsState, Step, StepKind


def on_draw(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    expect(keeper.rules, state, step, event, "draw")
    if state.deck == 0:
        raise GameError("The deck is empty: there is nothing to draw.")
    seat = state.turn
    state.deck -= 1
    state.hands[seat] += 1
    state.may_hold_spy[seat] = True
    state.steps[0] = Step(StepKind.ACT, seat)
    cues.append(Cue("card-accepted", seat, f"{state.players[seat]} draws a card."))


def on_act(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    """The card played: first its tap, then the choice of its ASSIST or its DEPLOY."""
    expect(keeper.rules, state, step, event, "tap", "assist", "deploy")
    seat = state.turn
    if event["type"] == "tap":
        card = unplaced(keeper, state, event)
        step.info["card"] = card.id
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} plays the {card.name}."))
        return
    card_id = step.info.get("card")
    if card_id is None:
        raise GameError("First tap the card you play.")
    state.steps.pop(0)
    state.hands[seat] -= 1
    if event["type"] == "assist":
        assist(keeper.rules, state, seat, card_id, cues)
    else:
        deploy(keeper.rules, state, seat, card_id, cues)


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
