"""Finding the Family: right after a draw, the current player claims to hold the Spy, the Telepath and
the Assassin (their Role may be one of them) and taps the three cards; the third one wins the round.

The cards of a claim come from a hidden hand: until the third one wins, nothing the table is told
names them (a refusal only names a card everyone sees elsewhere), and its count is all the view shows.
"""

from __future__ import annotations

from companion.core.cues import Cue
from companion.games.base import Event, GameError, seat_of
from companion.games.catalog import Card
from companion.games.peanuts.moves import Scorekeeper, draw_card, refuse
from companion.games.peanuts.rounds import win_round
from companion.games.peanuts.rules import FAMILY
from companion.games.peanuts.state import CLAIM_STEPS, PeanutsState, StepKind, family_unreachable, place


def start_claim(keeper: Scorekeeper, state: PeanutsState, event: Event, cues: list[Cue]) -> None:
    """`claim-family`: offered only after a draw (or at the turn's start: the claim implies the draw),
    to the player who drew, when the public record leaves the claim possible."""
    step = state.steps[0] if state.steps else None
    if step is None or step.kind not in {*CLAIM_STEPS, StepKind.DRAW}:
        raise GameError("Finding the Family can only be claimed by the current player right after a draw.")
    if "seat" in event and seat_of(event, len(state.players)) != state.turn:
        raise GameError(f"Only {state.players[state.turn]} has just drawn.")
    if step.kind is StepKind.DRAW:  # the claim implies the turn's draw
        draw_card(state, cues)
    why = family_unreachable(keeper.rules, state, state.turn)
    if why:
        raise GameError(f"Finding the Family cannot succeed now: {why}.")
    state.claim = []
    cues.append(Cue("card-accepted", state.turn, f"{state.players[state.turn]} claims Finding the Family!"))


def on_claim(keeper: Scorekeeper, state: PeanutsState, event: Event, cues: list[Cue]) -> None:
    """An input while a claim is open: its withdrawal, or a card of it."""
    seat = state.turn
    name = state.players[seat]
    if event["type"] == "cancel-claim":
        state.claim = None
        cues.append(Cue("card-accepted", seat, f"{name} withdraws the claim."))
        return
    if event["type"] != "tap":
        raise refuse(keeper.rules, state)
    if "seat" in event and seat_of(event, len(state.players)) != seat:
        raise GameError(f"Only {name} taps the cards of the claim.")
    assert state.claim is not None
    card = keeper.card(event)
    check_claimed(keeper, state, state.claim, card)
    state.claim.append(card.id)
    tapped = len(state.claim)
    cues.append(Cue("card-accepted", seat, f"{name}: {tapped} of 3 cards tapped.", {"tapped": tapped}))
    if tapped == 3:
        cards = list(state.claim)  # the round is won: all three are shown now
        cues.append(Cue("family-found", seat, f"{name} brought the Forgers together!", {"cards": cards}))
        win_round(state, [seat], f"{name} found the family: the Spy, the Telepath and the Assassin.", cues)


def check_claimed(keeper: Scorekeeper, state: PeanutsState, claim: list[str], card: Card) -> None:
    """Refuse a false card of the claim: one in sight elsewhere (the claimer's own Role excepted),
    not of the family or a second of a role already tapped, or more hand cards than the player holds.

    A card recorded face down is not refused: the physical card is the truth (see `moves.unplaced`)."""
    rules, seat = keeper.rules, state.turn
    own_role = state.roles[seat]
    where = None if card.id == own_role else place(state, card.id)
    if where is not None:
        raise GameError(f"False claim: {keeper.card_label(card)} is {where}.")
    role = rules.role(card.id)
    if role not in FAMILY or any(rules.role(c) == role for c in claim):
        raise GameError("False claim: tap one Spy, one Telepath and one Assassin.")
    from_hand = sum(1 for c in [*claim, card.id] if c != own_role)
    if from_hand > state.hands[seat]:
        name = state.players[seat]
        raise GameError(f"False claim: {name} holds only {state.hands[seat]} card(s) besides their Role.")
