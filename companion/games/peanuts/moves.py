"""What the steps of Mission for Peanuts share: the part of the engine a step needs, the checks of an
input, and the moves of a card that many steps make.

A step's handler (`StepHandler`, found in `companion.games.peanuts.engine.STEPS` by its `StepKind`)
answers the head of the queue; a Role's ASSIST or DEPLOY (`RoleAction`, found in
`companion.games.peanuts.roles.ASSIST` and `DEPLOY` by its role) queues the steps it needs.

What the table knows: everything the table may be told (prompt, cue, refusal) is decided from what
the whole table sees. The face-down cards the companion recorded never decide anything but the
showdown's discard count: a tap of one is taken as proof that the record was wrong, never refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from companion.core.cues import Cue
from companion.games.base import Event, GameError, seat_of
from companion.games.catalog import Card
from companion.games.peanuts.rules import PeanutsRules
from companion.games.peanuts.state import Discard, PeanutsState, Step, StepKind, place
from companion.games.peanuts.view import prompt


class Scorekeeper(Protocol):
    """What a step's handler needs of the engine (`companion.games.peanuts.engine.Peanuts`): the
    game data, and the card a tap names."""

    @property
    def rules(self) -> PeanutsRules: ...

    def card(self, event: Event) -> Card: ...

    def card_label(self, card: Card) -> str: ...


StepHandler = Callable[[Scorekeeper, PeanutsState, Step, Event, list[Cue]], None]
RoleAction = Callable[[PeanutsRules, PeanutsState, int, list[Cue]], None]


# Checks of an input --------------------------------------------------------


def refuse(rules: PeanutsRules, state: PeanutsState) -> GameError:
    return GameError(f"Not now. {prompt(rules, state).text}")


def expect(
    rules: PeanutsRules, state: PeanutsState, step: Step, event: Event, *types: str, by_seat: bool = True
) -> None:
    """Refuse an input of another type, or (`by_seat`: its "seat" names who answers rather than
    whom it picks) from another seat than the one asked."""
    if event["type"] not in types:
        raise refuse(rules, state)
    if not by_seat or step.seat is None or "seat" not in event:
        return
    if seat_of(event, len(state.players)) != step.seat:
        raise GameError(f"It is {state.players[step.seat]}'s move. {prompt(rules, state).text}")


def flag(event: Event, key: str) -> bool:
    value = event.get(key)
    if not isinstance(value, bool):
        raise GameError(f"'{key}' must be true or false.")
    return value


def unplaced(keeper: Scorekeeper, state: PeanutsState, event: Event) -> Card:
    """The tapped card, refused if the table sees it somewhere else.

    A card the companion recorded face down is accepted: the physical card is the truth, so the
    face-down card is another one and its record becomes unknown (asked at the showdown if the
    discard piles decide). Refusing would tell the table where that card lies."""
    card = keeper.card(event)
    where = place(state, card.id)
    if where is not None:
        raise GameError(f"{keeper.card_label(card)} is {where}: it cannot be here.")
    for pile in state.piles:
        for discard in pile:
            if discard.card == card.id:
                discard.card = None
    return card


# Moves ---------------------------------------------------------------------


def draw_card(state: PeanutsState, cues: list[Cue]) -> None:
    """The turn's draw: the `draw` input, or implied by the turn's first play or claim (the deck
    count and the log say it all the same)."""
    if state.deck == 0:
        raise GameError("The deck is empty: there is nothing to draw.")
    seat = state.turn
    state.deck -= 1
    state.hands[seat] += 1
    state.may_hold_spy[seat] = True
    state.steps[0] = Step(StepKind.ACT, seat)
    cues.append(Cue("card-accepted", seat, f"{state.players[seat]} draws a card."))


def discard_face_up(
    rules: PeanutsRules, state: PeanutsState, seat: int, card_id: str, cues: list[Cue]
) -> None:
    """A card goes face up to `seat`'s pile, except the Spy, which goes back into the deck."""
    if rules.role(card_id) == "spy":
        state.deck += 1
        cues.append(
            Cue("shuffle-in", seat, "The Spy goes back into the deck: shuffle it in.", {"card": card_id})
        )
    else:
        state.piles[seat].append(Discard(card_id, True))


def run(
    table: Mapping[str, RoleAction],
    rules: PeanutsRules,
    role: str,
    state: PeanutsState,
    seat: int,
    cues: list[Cue],
) -> None:
    """Carry out `role`'s ASSIST or DEPLOY (`table`) for `seat`; a role without one does nothing."""
    action = table.get(role)
    if action is not None:
        action(rules, state, seat, cues)


def void(seat: int, why: str, cues: list[Cue]) -> None:
    """The FAQ: an action that cannot be carried out in full is ignored as a whole."""
    cues.append(Cue("card-accepted", seat, f"Nothing happens: {why}.", {"void": True}))
