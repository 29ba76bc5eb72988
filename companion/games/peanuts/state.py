"""The state of a game of Mission for Peanuts, and what the whole table can see of it.

The turn is a small state machine. ``state.steps`` is the queue of what the table still owes (its
head is the prompt); an action resolves the head and may queue the next sub-steps; when the queue of
a turn is empty the turn ends. A "Finding the Family" claim is an overlay (``state.claim``) on the
steps that follow a draw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from companion.games.base import Status
from companion.games.peanuts.rules import FAMILY, IMMUNE_TO, PeanutsRules


class StepKind(StrEnum):
    """What the table owes. The value is what the public view calls it (`prompt.step`)."""

    REVEAL = "reveal"
    DRAW = "draw"
    ACT = "act"
    TARGET = "target"
    TRADE = "trade"
    DIRECTION = "direction"
    FACE_DOWN = "face-down"
    TAKE_BACK = "take-back"
    SPY_FOUND = "spy-found"
    ASSASSIN_CHECK = "assassin-check"
    ELIMINATE = "eliminate"
    AGENT_DISCARD = "agent-discard"
    SEER_DRAW = "seer-draw"
    INFORMANT_DRAW = "informant-draw"
    SPY_SWAP = "spy-swap"
    SHOWDOWN = "showdown"
    FLIP = "flip"
    ROUND_OVER = "round-over"


# The steps during which the current player has just drawn and may claim Finding the Family: the
# turn's draw (act), the Agent's ASSIST (agent-discard: before the target picks a card of the hand),
# the Seer's and the Informant's DEPLOY (before the drawn cards go back to the deck). A claim at the
# turn's draw itself implies the draw (`claim.start_claim`).
CLAIM_STEPS = frozenset({StepKind.ACT, StepKind.AGENT_DISCARD, StepKind.SEER_DRAW, StepKind.INFORMANT_DRAW})


@dataclass
class Discard:
    """One card of a discard pile. A face-down card is known to the engine, never shown; its `card`
    is None once a tap proved the record wrong (see `moves.unplaced`)."""

    card: str | None
    face_up: bool


@dataclass
class Step:
    """Something the table owes: `kind` names it, `seat` is who must answer (None: the host)."""

    kind: StepKind
    seat: int | None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class PeanutsState:
    """The whole game as the companion knows it. Only `Peanuts.public_view` leaves the engine."""

    players: list[str]
    target: int
    scores: list[int]
    status: Status = Status.SETUP
    round: int = 1
    start: int = 0  # who takes the first turn of this round
    turn: int = 0  # whose turn it is
    turns: int = 0  # turns begun this game, so a new turn (even an extra one) can be told apart
    deck: int = 0
    set_aside: str | None = None  # the Assassin out of a small table's deck
    roles: list[str | None] = field(default_factory=list)
    piles: list[list[Discard]] = field(default_factory=list)
    hands: list[int] = field(default_factory=list)  # how many cards each player holds
    # Whether each hand may hold the Spy, by the public record: the Spy is never dealt, so only a hand
    # that drew or received a card since the deal may hold it (see `spy_unreachable`).
    may_hold_spy: list[bool] = field(default_factory=list)
    eliminated: list[bool] = field(default_factory=list)
    shown: dict[int, str] = field(default_factory=dict)  # hand cards shown at the showdown
    steps: list[Step] = field(default_factory=list)
    claim: list[str] | None = None  # cards tapped so far for Finding the Family
    extra_turn: bool = False
    result: dict[str, Any] | None = None  # the showdown's outcome
    rounds: list[dict[str, Any]] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the story: what the cues told the table


def listing(items: list[str]) -> str:
    """ "Ann", "Ann and Bob", "Ann, Bob and Cy"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def clockwise(n: int, first: int) -> list[int]:
    return [(first + k) % n for k in range(n)]


def active(state: PeanutsState) -> list[int]:
    """The seats still in the round."""
    return [s for s in range(len(state.players)) if not state.eliminated[s]]


def next_active(state: PeanutsState, seat: int) -> int:
    return next(s for s in clockwise(len(state.players), seat + 1) if not state.eliminated[s])


# What the table knows. Everything the table may be told (prompt, cue, refusal) is decided from
# what the whole table sees. The face-down cards the companion recorded never decide anything but the
# showdown's discard count: a tap of one is taken as proof that the record was wrong, never refused.


def place(state: PeanutsState, card_id: str) -> str | None:
    """Where the whole table sees `card_id` (a Role, a face-up discard, the set-aside Assassin, a
    shown hand); None when it may be in a hand, in the deck or face down in a pile."""
    if card_id == state.set_aside:
        return "set aside for this round"
    for seat, role in enumerate(state.roles):
        if role == card_id:
            return f"{state.players[seat]}'s Role"
    for seat, pile in enumerate(state.piles):
        if any(d.face_up and d.card == card_id for d in pile):
            return f"in {state.players[seat]}'s discard pile"
    for seat, card in state.shown.items():
        if card == card_id:
            return f"{state.players[seat]}'s shown hand"
    return None


def could_hold(rules: PeanutsRules, state: PeanutsState, role: str) -> bool:
    """Whether the table may believe a card of `role` is in a hand: not every copy is in sight."""
    return any(card.get("role") == role and place(state, card.id) is None for card in rules.cards.values())


def immune(rules: PeanutsRules, state: PeanutsState, seat: int, threat: str) -> bool:
    role = state.roles[seat]
    return role is not None and threat in IMMUNE_TO.get(rules.role(role), frozenset())


def pickable(rules: PeanutsRules, state: PeanutsState, by: int, threat: str, *, self_ok: bool) -> list[int]:
    """Seats an action of `by` may pick: in the round, not protected from `threat`."""
    return [s for s in active(state) if (self_ok or s != by) and not immune(rules, state, s, threat)]


def role_at(rules: PeanutsRules, state: PeanutsState, seat: int) -> str:
    """The role of `seat`'s Role card (every seat has one once the round is under way)."""
    card = state.roles[seat]
    assert card is not None
    return rules.role(card)


def spy_unreachable(state: PeanutsState, seat: int) -> str | None:
    """Why the table knows `seat`'s hand cannot hold the Spy, or None when it may."""
    name = state.players[seat]
    if not state.may_hold_spy[seat]:
        return (
            f"{name} cannot hold the Spy: it went back into the deck after the deal, and {name} has "
            "neither drawn nor received a card since"
        )
    return None


def family_unreachable(rules: PeanutsRules, state: PeanutsState, seat: int) -> str | None:
    """Why the public record shows that `seat` cannot hold the whole family now, or None when the
    claim may succeed. Only what everyone sees decides: the Role, the hand count, the cards in sight."""
    name = state.players[seat]
    role = state.roles[seat]
    needed = [r for r in FAMILY if role is None or rules.role(role) != r]
    if len(needed) > state.hands[seat]:
        return f"{name} holds only {state.hands[seat]} card(s) besides their Role"
    for wanted in needed:
        if not could_hold(rules, state, wanted):
            return f"every {rules.role_names[wanted]} is in sight on the table"
    if "spy" in needed:
        return spy_unreachable(state, seat)
    return None
