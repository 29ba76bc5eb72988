"""What the table sees of a game of Mission for Peanuts: the prompt and the public view.

Only what the whole table sees decides a prompt: no face-down card is ever named, in the view, a
prompt label or its wording (see docs/rules/peanuts.md, "Secrets").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from itertools import combinations
from typing import Any

from companion.games.base import Action, Outcome, Prompt, Status, with_story
from companion.games.peanuts.rules import IMMUNE_TO, PeanutsRules
from companion.games.peanuts.showdown import pile_notches
from companion.games.peanuts.state import (
    CLAIM_STEPS,
    Discard,
    PeanutsState,
    Step,
    StepKind,
    active,
    could_hold,
    family_unreachable,
    listing,
    spy_unreachable,
)

# What a prompt step renders to: its text, whether a tap is expected, and the legal actions.
Ask = tuple[str, bool, list[Action]]


def prompt(rules: PeanutsRules, state: PeanutsState) -> Prompt:
    """What the table expects next: the head of the steps, or the claim in progress."""
    if state.status is Status.GAME_OVER:
        names = listing([state.players[s] for s in state.winners])
        return Prompt(f"Game over: {names} won.", step="game-over")
    turn_name = state.players[state.turn]
    if state.claim is not None:
        text = (
            f"{turn_name}: tap the Spy, the Telepath and the Assassin ({len(state.claim)} of 3); "
            "Next withdraws the claim."
        )
        cancel = Action("cancel-claim", "Cancel the claim", primary=True)
        return Prompt(text, state.turn, True, (cancel,), "claim")
    step = state.steps[0]
    text, tap, actions = ASK[step.kind](rules, state, step)
    if claimable(rules, state, step):
        actions.append(Action("claim-family", f"{turn_name}: Finding the Family!", seat=state.turn))
        text += f" Finding the Family: {turn_name}'s seat button, then the three cards."
    return Prompt(text, step.seat, tap, tuple(actions), step.kind.value)


def claimable(rules: PeanutsRules, state: PeanutsState, step: Step) -> bool:
    """Whether the current player may claim Finding the Family now: right after a draw, or at the
    start of the turn (the claim implies the draw), when the public record leaves it possible."""
    if step.kind is StepKind.DRAW:
        drawn = replace(
            state,
            hands=[h + (s == state.turn) for s, h in enumerate(state.hands)],
            may_hold_spy=[m or s == state.turn for s, m in enumerate(state.may_hold_spy)],
        )
        return family_unreachable(rules, drawn, state.turn) is None
    return step.kind in CLAIM_STEPS and family_unreachable(rules, state, state.turn) is None


def _asked(state: PeanutsState, step: Step) -> str:
    """The name of the player a step asks."""
    return state.players[step.seat or 0]


def _ask_reveal(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    return f"{_asked(state, step)}: tap your Role.", True, []


def _ask_draw(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    # The draw is a gesture of its own (the card drawn): the tap of the card played then tells the
    # companion of both, as Next tells it of the draw alone. (The your-turn cue says this text.)
    extra = " (extra turn)" if step.info.get("extra") else ""
    then = "then tap the card you play (DEPLOY: your Role too)"
    return (
        f"{state.players[state.turn]}: draw a card{extra}, {then}.",
        True,
        [Action("draw", "Draw a card", primary=True)],
    )


def _ask_act(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    name = state.players[state.turn]
    old = state.roles[state.turn]
    old_name = rules.name(old) if old else "Role"
    card_id = step.info.get("card")
    if card_id is None and step.info.get("deploy"):
        text = f"{name}: tap the card you DEPLOY as your new Role (your {old_name} again: no DEPLOY)."
        return text, True, []
    if card_id is None:
        return f"{name}: tap the card you play; DEPLOY: tap your Role ({old_name}) first.", True, []
    card = rules.name(card_id)
    actions = [
        Action("assist", f"Discard the {card} for its ASSIST", primary=True),
        Action("deploy", f"Deploy the {card} (the {old_name} goes to the discard pile)"),
    ]
    text = f"{name}: the {card}: Next for its ASSIST, or tap your Role ({old_name}) to DEPLOY it."
    return text, True, actions


TARGET_TEXTS = {
    "agent": "pick the player who discards their hand and takes a card from yours",
    "secret-police": "pick the player whose hand you look at",
    "handler-trade": "pick the player who swaps their hand for the top card of the deck",
    "agent-deploy": "pick the player whose Role's ASSIST you use",
}


def _ask_target(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    name = state.players[state.turn]
    actions = [Action("target", state.players[s], {"seat": s}, seat=s) for s in step.info["seats"]]
    return f"{name}: {TARGET_TEXTS[step.info['effect']]}: press their seat button.", False, actions


def _ask_trade(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    """Two seat buttons in turn (the first: `target`, the second posts the trade), or a pair."""
    names, seats, first = state.players, step.info["seats"], step.info.get("first")
    actions = [
        Action("target", f"{names[s]} trades" if first is None else f"Not {names[s]}", {"seat": s}, seat=s)
        for s in seats
        if first in (None, s)
    ]
    for a, b in combinations(seats, 2):
        by = (b if a == first else a) if first in (a, b) else None
        actions.append(Action("trade", f"{names[a]} ⇄ {names[b]}", {"seats": [a, b]}, seat=by))
    if first is None:
        text = f"{names[state.turn]}: press the seat buttons of the two players who trade hands (yours too)."
    else:
        other = names[first]
        text = (
            f"{names[state.turn]}: {other} trades with whom? Their seat button ({other}'s again: pick again)."
        )
    return text, False, actions


def _ask_direction(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    """The neighbour's seat button: the Roles move towards that player (left: the next seat)."""
    seats, names = active(state), state.players
    k = seats.index(state.turn)
    left, right = seats[(k + 1) % len(seats)], seats[(k - 1) % len(seats)]
    actions = [
        Action("direction", "Pass the Roles left (clockwise)", {"direction": "left"}, seat=left),
        Action(
            "direction", "Pass the Roles right", {"direction": "right"}, seat=None if right == left else right
        ),
    ]
    if right == left:
        way = f"press {names[left]}'s seat button: the two Roles swap"
    else:
        way = f"{names[left]}'s seat button (left) or {names[right]}'s (right)"
    return f"{names[state.turn]}: which way do the Roles move? {way}.", False, actions


def _ask_face_down(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    look = step.info["look"]
    text = f"{state.players[state.turn]}: look at the top {look} card(s), tap the one you discard face down."
    return text, True, []


def _discarded(rules: PeanutsRules, discard: Discard, index: int) -> str:
    if discard.face_up and discard.card is not None:
        return rules.name(discard.card)
    return f"face-down card #{index + 1}"


def _ask_take_back(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    """A pile's seat button shows its card #1, Next the next one, the owner's button again takes
    it back; the tablet picks any card at once, and a face-up card may be tapped."""
    names, owner, at = state.players, step.info.get("owner"), step.info.get("index", 0)
    actions = []
    for seat, pile in enumerate(state.piles):
        if pile and seat != owner:
            actions.append(Action("browse", f"{names[seat]}'s pile", {"seat": seat, "index": 0}, seat=seat))
        for index, discard in enumerate(pile):
            label = f"{names[seat]}: {_discarded(rules, discard, index)}"
            by = seat if (seat, index) == (owner, at) else None
            actions.append(Action("take-back", label, {"seat": seat, "index": index}, seat=by))
    name = names[state.turn]
    if owner is None:
        text = f"{name}: press the seat button of the pile you take a card back from, or tap a face-up card."
        return text, True, actions
    pile = state.piles[owner]
    if len(pile) > 1:
        following = {"seat": owner, "index": (at + 1) % len(pile)}
        actions.append(Action("browse", "Next card", following, primary=True))
    what = _discarded(rules, pile[at], at)
    text = (
        f"{name}: {names[owner]}'s pile, card #{at + 1} of {len(pile)}: {what}. {names[owner]}'s seat "
        "button shuffles it back into the deck" + (", Next shows the next card." if len(pile) > 1 else ".")
    )
    return text, True, actions


def _ask_spy_found(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    other = state.players[step.info["target"]]
    actions = [Action("spy-found", f"{other} has no Spy", {"found": False}, primary=True)]
    possible = could_hold(rules, state, "spy") and spy_unreachable(state, step.info["target"]) is None
    if possible:
        actions.append(Action("spy-found", f"{other} has the Spy!", {"found": True}, confirm=True))
    text = f"{state.players[state.turn]}: does {other} hold the Spy?"
    return text + (" If so, tap it; if not, Next." if possible else " Next."), possible, actions


def _ask_assassin_check(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    actions = [Action("assassin", "No Assassin", {"received": False}, primary=True)]
    possible = could_hold(rules, state, "assassin")
    if possible:
        actions.append(Action("assassin", "I received the Assassin", {"received": True}, confirm=True))
    text = f"{_asked(state, step)}: did you receive the Assassin?"
    return text + (" If so, tap it; if not, Next." if possible else " Next."), possible, actions


def _ask_eliminate(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    wanted = rules.role_names[step.info["role"]]
    return f"{_asked(state, step)} is out: tap your hand card (the {wanted}).", True, []


def _ask_agent_discard(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    name, by = _asked(state, step), state.players[step.info["by"]]
    return f"{name}: tap your hand card to discard it, then take one card from {by}'s hand.", True, []


def _ask_seer_draw(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    count = step.info["count"]
    text = f"{state.players[state.turn]}: you drew {count}; put {count} card(s) under the deck, then Next."
    return text, False, [Action("done", "Done", primary=True)]


def _ask_informant_draw(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    text = f"{state.players[state.turn]}: you drew the top card; put a card from your hand on top, then Next."
    return text, False, [Action("done", "Done: a card is back on top", primary=True)]


def _ask_spy_swap(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    text = f"{state.players[state.turn]}: tap the top card of the deck: it replaces the Spy as your Role."
    return text, True, []


def _ask_flip(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    number = step.info["index"] + 1
    text = f"The discard piles decide: {_asked(state, step)}, turn over face-down card #{number} and tap it."
    return text, True, []


def _ask_showdown(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    return f"Showdown: {_asked(state, step)}, tap your hand card.", True, []


def _ask_round_over(rules: PeanutsRules, state: PeanutsState, step: Step) -> Ask:
    last = state.rounds[-1]["reason"]
    actions = [Action("next-round", f"Deal round {state.round + 1}", primary=True)]
    return f"{last} Next deals round {state.round + 1}: {state.players[state.start]} starts.", False, actions


ASK: dict[StepKind, Callable[[PeanutsRules, PeanutsState, Step], Ask]] = {
    StepKind.REVEAL: _ask_reveal,
    StepKind.DRAW: _ask_draw,
    StepKind.ACT: _ask_act,
    StepKind.TARGET: _ask_target,
    StepKind.TRADE: _ask_trade,
    StepKind.DIRECTION: _ask_direction,
    StepKind.FACE_DOWN: _ask_face_down,
    StepKind.TAKE_BACK: _ask_take_back,
    StepKind.SPY_FOUND: _ask_spy_found,
    StepKind.ASSASSIN_CHECK: _ask_assassin_check,
    StepKind.ELIMINATE: _ask_eliminate,
    StepKind.AGENT_DISCARD: _ask_agent_discard,
    StepKind.SEER_DRAW: _ask_seer_draw,
    StepKind.INFORMANT_DRAW: _ask_informant_draw,
    StepKind.SPY_SWAP: _ask_spy_swap,
    StepKind.FLIP: _ask_flip,
    StepKind.SHOWDOWN: _ask_showdown,
    StepKind.ROUND_OVER: _ask_round_over,
}


# The public view ---------------------------------------------------------


def card_view(rules: PeanutsRules, card_id: str) -> dict[str, Any]:
    card = rules.cards[card_id]
    return {"card": card.id, "name": card.name, "role": card["role"], "notches": card["notches"]}


def _discard_view(rules: PeanutsRules, discard: Discard) -> dict[str, Any]:
    if not discard.face_up or discard.card is None:
        return {"face_up": False}  # a back: no id, no name, no notches
    return {"face_up": True, **card_view(rules, discard.card)}


def _player_view(rules: PeanutsRules, state: PeanutsState, seat: int) -> dict[str, Any]:
    role = state.roles[seat]
    protections = sorted(IMMUNE_TO.get(rules.role(role), frozenset())) if role else []
    return {
        "seat": seat,
        "name": state.players[seat],
        "score": state.scores[seat],
        "eliminated": state.eliminated[seat],
        "role": card_view(rules, role) if role else None,
        "protected_from": protections,
        "hand_count": state.hands[seat],
        "discards": [_discard_view(rules, d) for d in state.piles[seat]],
    }


def public_view(rules: PeanutsRules, state: PeanutsState, outcome: Outcome | None) -> dict[str, Any]:
    view = {
        "game": "peanuts",
        "status": state.status.value,
        "round": state.round,
        "players": [_player_view(rules, state, seat) for seat in range(len(state.players))],
        "prompt": prompt(rules, state).to_json(),
        "rounds": [_round_view(rules, r) for r in state.rounds],
        "winners": list(state.winners),
        "target": state.target,
        "deck_count": state.deck,
        "turn": state.turn,
        "extra_turn": state.extra_turn,
        "set_aside": card_view(rules, state.set_aside) if state.set_aside else None,
        "claim": None if state.claim is None else {"seat": state.turn, "tapped": len(state.claim)},
        "showdown": _showdown_view(rules, state),
    }
    return with_story(view, state.log, outcome)


def _round_view(rules: PeanutsRules, record: dict[str, Any]) -> dict[str, Any]:
    """A finished round: who won, why, and how (`how`: "family", "last-standing", "showdown"), with
    the cards the whole table saw then: the family's three cards, or every hand shown at the showdown
    with its Role, combination and notches. Those cards are named, never given by id: a later round
    may put the same card face down, and no face-down card's id is ever in the view."""
    view: dict[str, Any] = {key: record[key] for key in ("round", "winners", "reason") if key in record}
    if "how" not in record:
        return view
    view.update(how=record["how"], out=list(record.get("out", [])))
    if record["how"] == "family":
        view["cards"] = [_seen(rules, card) for card in record["cards"]]
    if record["how"] == "showdown":
        view["decided_by"] = record["decided_by"]
        view["hands"] = [
            _shown_hand(rules, shown["seat"], shown["role"], shown["hand"]) for shown in record["hands"]
        ]
    return view


def _seen(rules: PeanutsRules, card_id: str) -> dict[str, Any]:
    """A card seen in an earlier moment of the game: what it was, not which copy."""
    return {key: value for key, value in card_view(rules, card_id).items() if key != "card"}


def _shown_hand(rules: PeanutsRules, seat: int, role: str, card: str) -> dict[str, Any]:
    combo = rules.combination(role, card)
    return {
        "seat": seat,
        "role": _seen(rules, role),
        "hand": _seen(rules, card),
        "combination": combo[1] if combo else None,
        "notches": rules.notches(role) + rules.notches(card),
    }


def _showdown_view(rules: PeanutsRules, state: PeanutsState) -> dict[str, Any] | None:
    """Shown hands, their combination and notches; the discard totals only of the players whose
    tie came down to them (what the table counts aloud), never a face-down card itself."""
    if not state.shown:
        return None
    result = state.result or {}
    counted = result.get("piles_counted", [])
    hands = []
    for seat in sorted(state.shown):
        role, card = state.roles[seat], state.shown[seat]
        assert role is not None
        combo = rules.combination(role, card)
        hands.append(
            {
                "seat": seat,
                "role": card_view(rules, role),
                "hand": card_view(rules, card),
                "combination": combo[1] if combo else None,
                "combination_rank": combo[0] if combo else None,
                "notches": rules.notches(role) + rules.notches(card),
                "discard_notches": pile_notches(rules, state, seat) if seat in counted else None,
            }
        )
    return {
        "hands": hands,
        "winners": result.get("winners", []),
        "reason": result.get("reason"),
        "decided_by": result.get("decided_by"),
    }
