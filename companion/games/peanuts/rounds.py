"""A round of Mission for Peanuts, from the deal to its end: the deal and the Roles shown, the turns
begun and ended, the showdown when the deck runs out, and the Peanut Point of the round's winners.
"""

from __future__ import annotations

from typing import Any

from companion.core.cues import Cue
from companion.games.base import Event, GameError, Status, seat_of
from companion.games.peanuts.moves import Scorekeeper, expect, refuse, unplaced
from companion.games.peanuts.rules import PeanutsRules
from companion.games.peanuts.showdown import rank
from companion.games.peanuts.state import PeanutsState, Step, StepKind, clockwise, listing, next_active

# The deal and the turns --------------------------------------------------------


def deal(rules: PeanutsRules, state: PeanutsState, start: int) -> None:
    """A round's setup: 2 cards each (the Spy never dealt), one of them face down as the Role."""
    n = len(state.players)
    state.status = Status.SETUP
    state.start = state.turn = start
    state.set_aside = rules.set_aside_card if rules.sets_aside(n) else None
    state.deck = rules.deck_size(n)
    state.roles = [None] * n
    state.piles = [[] for _ in range(n)]
    state.hands = [1] * n
    state.may_hold_spy = [False] * n  # the Spy is never dealt
    state.eliminated = [False] * n
    state.shown = {}
    state.claim = None
    state.extra_turn = False
    state.result = None
    state.steps = [Step(StepKind.REVEAL, seat) for seat in clockwise(n, start)]


def on_reveal(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    if event["type"] != "tap":
        raise refuse(keeper.rules, state)
    seat = seat_of(event, len(state.players)) if "seat" in event else step.seat
    assert seat is not None
    if state.roles[seat] is not None:
        raise GameError(f"{state.players[seat]} has already shown their Role.")
    card = unplaced(keeper, state, event)
    if keeper.rules.role(card.id) == "spy":
        raise GameError("The Spy is never dealt: it went back into the deck after the deal.")
    state.roles[seat] = card.id
    state.steps = [s for s in state.steps if s.seat != seat]
    cues.append(Cue("card-revealed", seat, f"{state.players[seat]}'s Role: {card.name}", {"card": card.id}))
    if not state.steps:
        state.status = Status.PLAYING
        begin_turn(state, state.start)


def begin_turn(state: PeanutsState, seat: int, *, extra: bool = False) -> None:
    state.turn = seat
    state.turns += 1
    state.steps = [Step(StepKind.DRAW, seat, {"extra": extra})]


def end_turn(state: PeanutsState, cues: list[Cue]) -> None:
    """The turn's queue is empty: showdown if the deck is out, else the next (or extra) turn."""
    extra, state.extra_turn = state.extra_turn, False
    if state.deck == 0:
        start_showdown(state, cues)
    elif extra and not state.eliminated[state.turn]:
        cues.append(Cue("extra-turn", state.turn, f"{state.players[state.turn]} takes another turn."))
        begin_turn(state, state.turn, extra=True)
    else:
        begin_turn(state, next_active(state, state.turn))


# The end of a round ----------------------------------------------------------


def win_round(state: PeanutsState, winners: list[int], reason: str, cues: list[Cue]) -> None:
    """Score the round; end the game if somebody reached the target."""
    for seat in winners:
        state.scores[seat] += 1
    state.rounds.append({"round": state.round, "winners": list(winners), "reason": reason, **how_won(state)})
    state.claim = None
    state.steps = []
    cues.append(Cue("round-won", winners[0] if len(winners) == 1 else None, reason, {"winners": winners}))
    champions = [s for s, points in enumerate(state.scores) if points >= state.target]
    if champions:
        state.status = Status.GAME_OVER
        state.winners = champions
        names = listing([state.players[s] for s in champions])
        cues.append(Cue("game-won", champions[0] if len(champions) == 1 else None, f"{names} won the game!"))
        return
    # The winner starts the next round; of tied winners, the first clockwise from the player who
    # ended the round (see docs/rules/peanuts.md).
    n = len(state.players)
    state.start = next(s for s in clockwise(n, state.turn + 1) if s in winners)
    state.steps = [Step(StepKind.ROUND_OVER, None)]


def how_won(state: PeanutsState) -> dict[str, Any]:
    """How the round just won was won, in public facts only, kept with the round so the board and the
    history can still show it once the next round is dealt: Finding the Family (the three cards, shown
    then), the last player standing, or the showdown (every hand shown, with its Role). And who is out."""
    out = [s for s, gone in enumerate(state.eliminated) if gone]
    if state.result is not None:
        hands = [{"seat": s, "role": state.roles[s], "hand": card} for s, card in sorted(state.shown.items())]
        return {"how": "showdown", "decided_by": state.result["decided_by"], "hands": hands, "out": out}
    if state.claim is not None:
        return {"how": "family", "cards": list(state.claim), "out": out}
    return {"how": "last-standing", "out": out}


def start_showdown(state: PeanutsState, cues: list[Cue]) -> None:
    n = len(state.players)
    state.steps = [
        Step(StepKind.SHOWDOWN, s) for s in clockwise(n, state.turn + 1) if not state.eliminated[s]
    ]
    cues.append(Cue("showdown", None, "The deck is empty: everyone still in shows their hand."))


def on_showdown(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    if event["type"] != "tap":
        raise refuse(keeper.rules, state)
    seat = seat_of(event, len(state.players)) if "seat" in event else step.seat
    if seat not in [s.seat for s in state.steps]:
        raise GameError("That player is not showing a hand now.")
    assert seat is not None
    card = unplaced(keeper, state, event)
    state.shown[seat] = card.id
    state.steps = [s for s in state.steps if s.seat != seat]
    cues.append(
        Cue("card-revealed", seat, f"{state.players[seat]} shows the {card.name}.", {"card": card.id})
    )
    if not state.steps:
        settle_showdown(keeper.rules, state, cues)


def settle_showdown(rules: PeanutsRules, state: PeanutsState, cues: list[Cue]) -> None:
    """Rank the shown hands. If the discard piles decide and a pile holds a face-down card whose
    record proved wrong (`moves.unplaced`), its owner first turns it over and taps it (`flip`)."""
    result = rank(rules, state)
    flips = [
        Step(StepKind.FLIP, seat, {"index": index})
        for seat in result["piles_counted"]
        for index, discard in enumerate(state.piles[seat])
        if discard.card is None
    ]
    if flips:
        state.steps = flips
        return
    state.result = result
    win_round(state, result["winners"], result["reason"], cues)


def on_flip(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    expect(keeper.rules, state, step, event, "tap")
    seat, index = step.seat, step.info["index"]
    assert seat is not None
    card = unplaced(keeper, state, event)
    state.piles[seat][index].card = card.id  # it stays a back on the scoreboard: only totals show
    state.steps.pop(0)
    cues.append(
        Cue("card-accepted", seat, f"{state.players[seat]}'s face-down card #{index + 1} is counted.")
    )
    if not state.steps:
        settle_showdown(keeper.rules, state, cues)


def on_round_over(
    keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]
) -> None:
    expect(keeper.rules, state, step, event, "next-round")
    state.round += 1
    deal(keeper.rules, state, state.start)
    cues.append(Cue("card-accepted", None, f"Round {state.round}: show your Roles."))
