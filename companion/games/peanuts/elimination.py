"""A player out of the round: the receiver's Assassin check, and the hand an eliminated player taps
(the Assassin received, or the Spy the Secret Police found). The last player standing wins the round.
"""

from __future__ import annotations

from companion.core.cues import Cue
from companion.games.base import Event, GameError
from companion.games.peanuts.moves import Scorekeeper, discard_face_up, expect, flag, unplaced
from companion.games.peanuts.rounds import win_round
from companion.games.peanuts.rules import PeanutsRules
from companion.games.peanuts.state import PeanutsState, Step, StepKind, active, could_hold, immune


def assassin_checks(rules: PeanutsRules, state: PeanutsState, seats: list[int]) -> list[Step]:
    """Ask each player who received a card whether it was the Assassin (a Telepath Role is safe)."""
    return [Step(StepKind.ASSASSIN_CHECK, s) for s in seats if not immune(rules, state, s, "assassin")]


def on_assassin_check(
    keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]
) -> None:
    expect(keeper.rules, state, step, event, "assassin", "tap")
    if event["type"] == "assassin" and not flag(event, "received"):
        state.steps.pop(0)
        cues.append(Cue("card-accepted", step.seat, "No Assassin."))
        return
    if not could_hold(keeper.rules, state, "assassin"):  # only what everyone sees, see `state.place`
        raise GameError("No Assassin can be in that hand: every Assassin is in sight on the table.")
    state.steps[0] = Step(StepKind.ELIMINATE, step.seat, {"role": "assassin"})
    if event["type"] == "tap":  # the tap of the Assassin is the answer and the discard at once
        on_eliminate(keeper, state, state.steps[0], event, cues)


def on_eliminate(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    expect(keeper.rules, state, step, event, "tap")
    seat = step.seat
    assert seat is not None
    card = unplaced(keeper, state, event)
    wanted = step.info["role"]
    if keeper.rules.role(card.id) != wanted:
        raise GameError(
            f"{state.players[seat]} must tap their hand card: the {keeper.rules.role_names[wanted]}."
        )
    state.steps.pop(0)
    state.hands[seat] = 0
    discard_face_up(keeper.rules, state, seat, card.id, cues)
    state.eliminated[seat] = True
    cues.append(
        Cue("player-eliminated", seat, f"{state.players[seat]} is out of this round.", {"card": card.id})
    )
    left = active(state)
    if len(left) == 1:
        win_round(state, left, f"{state.players[left[0]]} is the last player standing.", cues)
