"""The Roles' actions in Mission for Peanuts: each Role's ASSIST and DEPLOY (found in `ASSIST` and
`DEPLOY` by its role), and the answers to the steps they queue (a player picked, two hands traded,
the Roles passed, a card put face down or shuffled back, the Spy found or not...).

An action that cannot be carried out in full does nothing (`moves.void`, the FAQ).
"""

from __future__ import annotations

from companion.core.cues import Cue
from companion.games.base import Event, GameError, seat_of
from companion.games.peanuts.elimination import assassin_checks, on_eliminate
from companion.games.peanuts.moves import (
    RoleAction,
    Scorekeeper,
    discard_face_up,
    expect,
    flag,
    refuse,
    run,
    unplaced,
    void,
)
from companion.games.peanuts.rules import PeanutsRules
from companion.games.peanuts.state import (
    Discard,
    PeanutsState,
    Step,
    StepKind,
    active,
    could_hold,
    pickable,
    role_at,
    spy_unreachable,
)
from companion.games.peanuts.view import prompt

# ASSIST actions ------------------------------------------------------------


def telepath_assist(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    # The hands are shown to this player alone and never tapped: the companion is told nothing.
    state.extra_turn = True
    name = state.players[seat]
    cues.append(Cue("card-accepted", seat, f"Everyone else shows {name} their hand; {name} plays again."))


def seer_assist(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    if state.deck == 0:
        void(seat, "the deck is empty", cues)
        return
    state.steps.insert(0, Step(StepKind.FACE_DOWN, seat, {"look": min(3, state.deck)}))


def informant_assist(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    seats = pickable(rules, state, seat, "trade", self_ok=True)
    if len(seats) < 2:
        void(seat, "fewer than two players can trade hands", cues)
        return
    state.steps.insert(0, Step(StepKind.TRADE, seat, {"seats": seats}))


def handler_assist(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    state.steps.insert(0, Step(StepKind.DIRECTION, seat))


def agent_assist(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    seats = pickable(rules, state, seat, "discard", self_ok=False)
    if not seats:
        void(seat, "no other player can be made to discard their hand", cues)
    elif state.deck == 0:
        void(seat, "the deck is empty, so the Agent cannot draw", cues)
    else:
        state.steps.insert(0, Step(StepKind.TARGET, seat, {"effect": "agent", "seats": seats}))


def secret_police_assist(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    seats = pickable(rules, state, seat, "secret-police", self_ok=False)
    if not seats:
        void(seat, "no other player can be picked by the Secret Police", cues)
        return
    state.steps.insert(0, Step(StepKind.TARGET, seat, {"effect": "secret-police", "seats": seats}))


# DEPLOY actions ------------------------------------------------------------


def spy_deploy(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    if state.deck == 0:
        void(seat, "the deck is empty, so the Spy stays", cues)
        return
    state.steps.insert(0, Step(StepKind.SPY_SWAP, seat))


def seer_deploy(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    count = min(2, state.deck)
    if count == 0:
        void(seat, "the deck is empty", cues)
        return
    state.deck -= count
    state.hands[seat] += count
    state.may_hold_spy[seat] = True
    state.steps.insert(0, Step(StepKind.SEER_DRAW, seat, {"count": count}))


def informant_deploy(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    if state.deck == 0:
        void(seat, "the deck is empty", cues)
        return
    # The player draws the top card; until they put a card back on top (`done`) they hold Role +
    # 2 cards. The FAQ counts this DEPLOY as a draw, but with the Informant as Role two cards
    # cannot make the family, so no claim is offered here (see `family_unreachable`).
    state.deck -= 1
    state.hands[seat] += 1
    state.may_hold_spy[seat] = True
    state.steps.insert(0, Step(StepKind.INFORMANT_DRAW, seat))
    cues.append(Cue("card-accepted", seat, f"{state.players[seat]} draws the top card."))


def handler_deploy(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    if not any(state.piles):
        void(seat, "no discard pile holds a card", cues)
        return
    state.steps.insert(0, Step(StepKind.TAKE_BACK, seat))


def agent_deploy(rules: PeanutsRules, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
    seats = [s for s in active(state) if s != seat and role_at(rules, state, s) in ASSIST]
    if not seats:
        void(seat, "no other player's Role has an ASSIST", cues)
        return
    state.steps.insert(0, Step(StepKind.TARGET, seat, {"effect": "agent-deploy", "seats": seats}))


# Each Role's ASSIST and DEPLOY. A role not listed has none: the Spy and the Assassin are discarded
# with no ASSIST; three DEPLOYs only protect (see `IMMUNE_TO`).
ASSIST: dict[str, RoleAction] = {
    "telepath": telepath_assist,
    "seer": seer_assist,
    "informant": informant_assist,
    "handler": handler_assist,
    "agent": agent_assist,
    "secret-police": secret_police_assist,
}
DEPLOY: dict[str, RoleAction] = {
    "spy": spy_deploy,
    "seer": seer_deploy,
    "informant": informant_deploy,
    "handler": handler_deploy,
    "agent": agent_deploy,
}


# The player an action picks, and the hands it trades ------------------------


def on_target(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    rules = keeper.rules
    expect(rules, state, step, event, "target", by_seat=False)
    seat = state.turn
    target = seat_of(event, len(state.players))
    effect = step.info["effect"]
    if target not in step.info["seats"]:
        raise GameError(why_not(rules, state, seat, target, effect))
    state.steps.pop(0)
    name, other = state.players[seat], state.players[target]
    cues.append(Cue("card-accepted", target, f"{name} picks {other}."))
    if effect == "agent":
        state.deck -= 1  # the Agent's player draws first (safe, even the Assassin)
        state.hands[seat] += 1
        state.may_hold_spy[seat] = True
        state.steps.insert(0, Step(StepKind.AGENT_DISCARD, target, {"by": seat}))
    elif effect == "secret-police":
        state.steps.insert(0, Step(StepKind.SPY_FOUND, seat, {"target": target}))
    elif effect == "handler-trade":
        # The hand card goes to the deck, the top card to the hand: the deck count stays.
        state.may_hold_spy[target] = True
        state.steps[0:0] = assassin_checks(rules, state, [target])
    else:  # "agent-deploy": the ASSIST of the picked player's Role, carried out by `seat`
        role_card = state.roles[target]
        assert role_card is not None
        run(ASSIST, rules, rules.role(role_card), state, seat, cues)


def why_not(rules: PeanutsRules, state: PeanutsState, seat: int, target: int, effect: str) -> str:
    """Why `target` cannot be picked by `seat` for `effect`, in the players' words."""
    name = state.players[target]
    if state.eliminated[target]:
        return f"{name} is out of this round."
    if target == seat:
        return "You must pick another player."
    role = state.roles[target]
    role_name = rules.name(role) if role else "?"
    if effect == "agent-deploy":
        return f"{name}'s Role ({role_name}) has no ASSIST to use."
    return f"{name}'s Role ({role_name}) protects them from that."


def on_trade(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    """The Informant's trade: `trade` with both seats, or two seat buttons in turn (`target`)."""
    rules = keeper.rules
    expect(rules, state, step, event, "trade", "target", by_seat=event["type"] == "trade")
    pair = one_trader(rules, state, step, event, cues) if event["type"] == "target" else traders(state, event)
    if pair is None:
        return
    a, b = pair
    for s in (a, b):
        if s not in step.info["seats"]:
            raise GameError(why_not(rules, state, -1, s, "trade"))
    state.steps.pop(0)
    state.hands[a], state.hands[b] = state.hands[b], state.hands[a]
    state.may_hold_spy[a], state.may_hold_spy[b] = state.may_hold_spy[b], state.may_hold_spy[a]
    cues.append(Cue("card-accepted", state.turn, f"{state.players[a]} and {state.players[b]} trade hands."))
    state.steps[0:0] = assassin_checks(rules, state, [a, b])


def traders(state: PeanutsState, event: Event) -> tuple[int, int]:
    seats = event.get("seats")
    if not (isinstance(seats, list) and len(seats) == 2):
        raise GameError("'seats' must list the two players who trade hands.")
    a, b = (seat_of({"seat": s}, len(state.players)) for s in seats)
    if a == b:
        raise GameError("Two different players must trade hands.")
    return a, b


def one_trader(
    rules: PeanutsRules, state: PeanutsState, step: Step, event: Event, cues: list[Cue]
) -> tuple[int, int] | None:
    """A seat button during the trade: the first player, then the second (the first again: picked
    no more). The pair once both are picked."""
    seat = seat_of(event, len(state.players))
    if seat not in step.info["seats"]:
        raise GameError(why_not(rules, state, -1, seat, "trade"))
    first = step.info.pop("first", None)
    if first is None:
        step.info["first"] = seat
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} trades hands: with whom?"))
        return None
    if first == seat:
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} does not trade after all."))
        return None
    return first, seat


# The Handler ---------------------------------------------------------------


def on_direction(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    expect(keeper.rules, state, step, event, "direction")
    direction = event.get("direction")
    if direction not in ("left", "right"):
        raise GameError('\'direction\' must be "left" or "right".')
    seats = active(state)
    shift = 1 if direction == "left" else -1
    moved = {seats[(k + shift) % len(seats)]: state.roles[s] for k, s in enumerate(seats)}
    for s, role in moved.items():
        state.roles[s] = role
    state.steps.pop(0)
    cues.append(Cue("card-accepted", state.turn, f"Every Role moves one seat to the {direction}."))


def taken_back(keeper: Scorekeeper, state: PeanutsState, event: Event) -> tuple[int, int]:
    """The discarded card the Handler picks, as (owner, index in the pile)."""
    n = len(state.players)
    if event["type"] == "tap":  # a face-up card only: a face-down one is picked by its number
        card = keeper.card(event)
        found = [
            (s, i) for s in range(n) for i, d in enumerate(state.piles[s]) if d.face_up and d.card == card.id
        ]
        if not found:
            raise GameError("Tap a card lying face up in a discard pile, or pick a card by its number.")
        return found[0]
    owner = seat_of(event, n)
    index = event.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(state.piles[owner]):
        raise GameError(f"{state.players[owner]}'s discard pile has no card number {index}.")
    return owner, index


def browse(state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    """A pile's seat button (or Next) during the Handler's take-back: which card its owner's button
    takes back now (`index`, oldest first)."""
    owner = seat_of(event, len(state.players))
    index, pile = event.get("index", 0), state.piles[owner]
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(pile):
        raise GameError(f"{state.players[owner]}'s discard pile has no card number {index}.")
    step.info.update(owner=owner, index=index)
    text = f"{state.players[owner]}'s pile: card #{index + 1} of {len(pile)}."
    cues.append(Cue("card-accepted", owner, text))


def on_take_back(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    rules = keeper.rules
    expect(rules, state, step, event, "take-back", "tap", "browse", by_seat=event["type"] == "tap")
    if event["type"] == "browse":
        browse(state, step, event, cues)
        return
    owner, index = taken_back(keeper, state, event)
    discard = state.piles[owner].pop(index)
    state.deck += 1
    state.steps.pop(0)
    if discard.face_up and discard.card is not None:
        what, data = f"the {rules.name(discard.card)}", {"card": discard.card}
    else:
        what, data = "a face-down card", {}
    cues.append(
        Cue(
            "shuffle-in",
            owner,
            f"{what.capitalize()} from {state.players[owner]}'s pile goes into the deck: shuffle it in.",
            data,
        )
    )
    seats = pickable(rules, state, state.turn, "trade", self_ok=True)
    state.steps.insert(0, Step(StepKind.TARGET, state.turn, {"effect": "handler-trade", "seats": seats}))


# The Secret Police, the Agent, the Seer, the Informant, the Spy ---------------


def on_spy_found(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    """The Secret Police's outcome: only whether the Spy was there (`spy-found`; Next: not found),
    or the tap of the Spy itself, found and discarded at once. The hand is never tapped otherwise."""
    rules = keeper.rules
    if event["type"] == "tap":
        spy_shown(keeper, state, step, event, cues)
        return
    expect(rules, state, step, event, "spy-found")
    found = flag(event, "found")
    target = step.info["target"]
    state.steps.pop(0)
    if found:
        spy_found(rules, state, target, cues)
    else:
        cues.append(Cue("card-accepted", target, "No Spy there."))


def spy_found(rules: PeanutsRules, state: PeanutsState, target: int, cues: list[Cue]) -> None:
    """`target`'s hand held the Spy: they are out (their tap of it comes next) and the player plays
    again. Refused where the public record shows the Spy cannot be there."""
    if not could_hold(rules, state, "spy"):  # only what everyone sees, see `state.place`
        raise GameError("The Spy cannot be in that hand: it is in sight on the table.")
    why = spy_unreachable(state, target)
    if why:
        raise GameError(f"{why}.")
    state.extra_turn = True
    state.steps.insert(0, Step(StepKind.ELIMINATE, target, {"role": "spy"}))
    text = f"The Secret Police found the Spy: {state.players[target]} is out."
    cues.append(Cue("card-accepted", target, text))


def spy_shown(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    """A tap during `spy-found` (from the player's reader or the target's): only the Spy is taken,
    as the answer and the eliminated hand at once; any other card is refused in the same words."""
    target = step.info["target"]
    if "seat" in event and seat_of(event, len(state.players)) not in (state.turn, target):
        raise GameError(f"It is {state.players[state.turn]}'s move. {prompt(keeper.rules, state).text}")
    if keeper.rules.role(keeper.card(event).id) != "spy":
        raise refuse(keeper.rules, state)
    state.steps.pop(0)
    spy_found(keeper.rules, state, target, cues)
    tap = {key: value for key, value in event.items() if key != "seat"}
    on_eliminate(keeper, state, state.steps[0], tap, cues)


def on_agent_discard(
    keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]
) -> None:
    expect(keeper.rules, state, step, event, "tap")
    target, by = step.seat, step.info["by"]
    assert target is not None
    card = unplaced(keeper, state, event)
    state.steps.pop(0)
    state.hands[target] -= 1
    discard_face_up(keeper.rules, state, target, card.id, cues)
    # Then the target takes one card of the Agent player's hand: that one may be the Assassin.
    state.hands[target] += 1
    state.hands[by] -= 1
    state.may_hold_spy[target] = state.may_hold_spy[by]
    cues.append(
        Cue(
            "card-accepted",
            target,
            f"{state.players[target]} discards the {card.name}, takes a card from {state.players[by]}.",
            {"card": card.id},
        )
    )
    state.steps[0:0] = assassin_checks(keeper.rules, state, [target])


def on_face_down(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    expect(keeper.rules, state, step, event, "tap")
    seat = state.turn
    card = unplaced(keeper, state, event)
    state.steps.pop(0)
    state.deck -= 1
    state.piles[seat].append(Discard(card.id, False))
    # No name, no id: the whole table hears this cue.
    cues.append(Cue("card-accepted", seat, f"{state.players[seat]} discards a card face down."))


def on_seer_draw(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    expect(keeper.rules, state, step, event, "done")
    count = step.info["count"]
    state.deck += count
    state.hands[state.turn] -= count
    state.steps.pop(0)
    cues.append(Cue("card-accepted", state.turn, f"{count} card(s) go under the deck."))


def on_informant_draw(
    keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]
) -> None:
    expect(keeper.rules, state, step, event, "done")
    state.deck += 1
    state.hands[state.turn] -= 1
    state.steps.pop(0)
    cues.append(Cue("card-accepted", state.turn, "A card goes back on top of the deck."))


def on_spy_swap(keeper: Scorekeeper, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
    expect(keeper.rules, state, step, event, "tap")
    seat = state.turn
    card = unplaced(keeper, state, event)
    spy = state.roles[seat]
    state.roles[seat] = card.id  # the deck gives one card and takes the Spy: its count stays
    state.steps.pop(0)
    cues.append(Cue("shuffle-in", seat, "The Spy goes into the deck: shuffle it in.", {"card": spy}))
    cues.append(
        Cue("card-revealed", seat, f"{state.players[seat]}'s new Role: {card.name}", {"card": card.id})
    )
