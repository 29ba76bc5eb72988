"""SPY x FAMILY: Mission for Peanuts: the companion keeps the public state of every round.

The companion cannot see hands. It knows what the table knows: every Role (face up), every discard
pile in order (face-down cards included, because the player tapped them as they put them down), the
exact number of cards in the deck, how many cards each player holds, who is out, whose turn it is and
the Peanut Points. From that it refuses what cannot be true (a card in sight somewhere else, a
target a Role protects, a false "Finding the Family"), tells the table when the deck runs out, and
scores the showdown. Rules and protocol in our words: ``docs/rules/peanuts.md``.

Secrets: only what the whole table sees decides a prompt, a cue or a refusal. The face-down cards
it recorded count only in the showdown's discard count (as the piles turned over do); a tap that
contradicts such a record is accepted and makes that record unknown. A claim is told by its count
until it wins.

The turn is a small state machine. ``state.steps`` is the queue of what the table still owes (its
head is the prompt); an action resolves the head and may queue the next sub-steps; when the queue of
a turn is empty the turn ends. A "Finding the Family" claim is an overlay (``state.claim``) on the
steps that follow a draw.

Inputs (every one may carry ``"seat"``: it must then be the seat the prompt asks, except where a seat
is the choice itself):

- ``{"type": "tap", "card": "peanuts/seer-1"}``: a card, read by the reader. What it means comes
  from the prompt: a Role at the reveal, the card a player plays, a face-down discard, a hand
  discarded on elimination, a hand shown at the showdown, a card of a claim, a face-down card
  turned over when the discard piles decide a showdown and the companion's record of it proved
  wrong...
- ``{"type": "draw"}``: the current player draws the card that begins their turn.
- ``{"type": "assist"}`` / ``{"type": "deploy"}``: after tapping the played card, discard it for its
  ASSIST or make it the new Role for its DEPLOY.
- ``{"type": "target", "seat": 2}``: the player an action picks.
- ``{"type": "trade", "seats": [0, 2]}``: the two players the Informant makes trade hands.
- ``{"type": "direction", "direction": "left" | "right"}``: where the Handler passes the Roles
  (left = clockwise = the next seat number).
- ``{"type": "take-back", "seat": 1, "index": 0}``: the discarded card the Handler shuffles back
  (index in that player's pile, oldest first); a tap of a face-up discarded card does the same.
- ``{"type": "spy-found", "found": true | false}``: whether the Secret Police saw the Spy.
- ``{"type": "assassin", "received": true | false}``: whether the player asked received the
  Assassin (a tap of the Assassin answers yes and discards it at once).
- ``{"type": "done"}``: the Seer's DEPLOY cards are back under the deck, or the Informant's DEPLOY
  card is back on top.
- ``{"type": "claim-family"}`` then three taps, or ``{"type": "cancel-claim"}``.
- ``{"type": "next-round"}``: deal the next round.

Options of `setup`: ``{"start": seat, "target": points}``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from companion.catalog import Card, DataError, GameData
from companion.cues import Cue
from companion.games.base import (
    Action,
    Engine,
    Event,
    GameError,
    Outcome,
    Prompt,
    SetupOption,
    Status,
    check_players,
    seat_of,
)

ROLE_IDS = ("spy", "telepath", "assassin", "seer", "informant", "handler", "agent", "secret-police")
FAMILY = ("spy", "telepath", "assassin")

# What a Role protects its holder from while it is their Role. The threats are named after what an
# action does to the player it picks: "trade" and "discard" a hand, "assassin" (receiving it), and
# being picked by the "secret-police".
IMMUNE_TO: dict[str, frozenset[str]] = {
    "telepath": frozenset({"assassin"}),
    "assassin": frozenset({"trade", "discard"}),
    "secret-police": frozenset({"secret-police"}),
}

# Which method carries out each Role's ASSIST and DEPLOY. None: the card has no such action (the
# Spy and the Assassin are discarded with no ASSIST; three DEPLOYs only protect, see IMMUNE_TO).
ASSIST: dict[str, str | None] = {
    "spy": None,
    "telepath": "_telepath_assist",
    "assassin": None,
    "seer": "_seer_assist",
    "informant": "_informant_assist",
    "handler": "_handler_assist",
    "agent": "_agent_assist",
    "secret-police": "_secret_police_assist",
}
DEPLOY: dict[str, str | None] = {
    "spy": "_spy_deploy",
    "telepath": None,
    "assassin": None,
    "seer": "_seer_deploy",
    "informant": "_informant_deploy",
    "handler": "_handler_deploy",
    "agent": "_agent_deploy",
    "secret-police": None,
}

# The steps during which the current player has just drawn and may claim Finding the Family: the
# turn's draw (act), the Agent's ASSIST (agent-discard: before the target picks a card of the hand),
# the Seer's and the Informant's DEPLOY (before the drawn cards go back to the deck).
CLAIM_STEPS = frozenset({"act", "agent-discard", "seer-draw", "informant-draw"})

# What a prompt step renders to: its text, whether a tap is expected, and the legal actions.
Ask = tuple[str, bool, list[Action]]

NOT_FOUND = 10**6  # the combination rank of a showdown hand without any combination


@dataclass
class Discard:
    """One card of a discard pile. A face-down card is known to the engine, never shown; its `card`
    is None once a tap proved the record wrong (see `Peanuts._unplaced`)."""

    card: str | None
    face_up: bool


@dataclass
class Step:
    """Something the table owes: `kind` names it, `seat` is who must answer (None: the host)."""

    kind: str
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
    eliminated: list[bool] = field(default_factory=list)
    shown: dict[int, str] = field(default_factory=dict)  # hand cards shown at the showdown
    steps: list[Step] = field(default_factory=list)
    claim: list[str] | None = None  # cards tapped so far for Finding the Family
    extra_turn: bool = False
    result: dict[str, Any] | None = None  # the showdown's outcome
    rounds: list[dict[str, Any]] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)


def _listing(items: list[str]) -> str:
    """ "Ann", "Ann and Bob", "Ann, Bob and Cy"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class Peanuts(Engine[PeanutsState]):
    """The Mission for Peanuts scorekeeper. Pure: `apply` returns a new state and the cues."""

    game = "peanuts"
    # Every input may name the seat that answers ("seat"); where a seat is the choice, that is it.
    action_keys = {
        kind: frozenset({"seat", *keys})
        for kind, keys in {
            "draw": (),
            "assist": (),
            "deploy": (),
            "target": (),
            "trade": ("seats",),
            "direction": ("direction",),
            "take-back": ("index",),
            "spy-found": ("found",),
            "assassin": ("received",),
            "done": (),
            "claim-family": (),
            "cancel-claim": (),
            "next-round": (),
        }.items()
    }
    options = (
        SetupOption("start", "Start player", "seat", 0),
        SetupOption("target", "Peanut Points to win", "int"),
    )

    # Filled by `validate_data` from seeds/peanuts.toml.
    role_names: dict[str, str]
    combos: list[tuple[int, frozenset[str], str]]  # rank, roles, name ("Spy x Telepath")
    targets: dict[int, int]
    small_table: int
    set_aside_card: str | None

    # ------------------------------------------------------------------ data

    def validate_data(self, data: GameData) -> None:
        """Check the roles, the cards (notches = copies), the combinations, the targets and the
        small-table Assassin, and that every table size leaves a real deck after the deal."""

        def fail(message: str) -> DataError:
            return DataError(f"Mission for Peanuts data ({data.game}): {message}")

        roles = data.extra.get("roles")
        if not isinstance(roles, list) or not all(isinstance(r, dict) for r in roles):
            raise fail("'roles' must be a list of [[roles]] tables")
        ids = [r.get("id") for r in roles]
        if sorted(map(str, ids)) != sorted(ROLE_IDS):
            raise fail(f"'roles' must define exactly these roles: {', '.join(ROLE_IDS)}")
        self.role_names = {}
        for entry in roles:
            if not isinstance(entry.get("name"), str) or not entry["name"]:
                raise fail(f"role {entry['id']} has no name")
            self.role_names[entry["id"]] = entry["name"]

        copies = Counter(card.get("role") for card in data.cards.values())
        for card in data.cards.values():
            if card.get("role") not in ROLE_IDS:
                raise fail(f"card {card.id} has no valid 'role'")
            notches = card.get("notches")
            if isinstance(notches, bool) or notches != copies[card["role"]]:
                raise fail(
                    f"card {card.id}: 'notches' must equal the number of {card['role']} cards "
                    f"({copies[card['role']]})"
                )
        for role in ROLE_IDS:
            if copies[role] < 1:
                raise fail(f"there is no {role} card")

        entries = data.extra.get("combinations")
        if not isinstance(entries, list) or not entries:
            raise fail("there must be at least one [[combinations]] entry")
        self.combos = []
        seen: set[frozenset[str]] = set()
        for entry in entries:
            pair = entry.get("roles") if isinstance(entry, dict) else None
            rank = entry.get("rank") if isinstance(entry, dict) else None
            if (
                not isinstance(pair, list)
                or len(pair) != 2
                or len(set(pair)) != 2
                or not set(pair) <= set(ROLE_IDS)
                or isinstance(rank, bool)
                or not isinstance(rank, int)
                or rank < 1
            ):
                raise fail("each [[combinations]] needs 'rank' >= 1 and 'roles' = two different roles")
            if frozenset(pair) in seen:
                raise fail(f"the combination {' x '.join(pair)} appears twice")
            seen.add(frozenset(pair))
            name = " \N{MULTIPLICATION SIGN} ".join(self.role_names[r] for r in pair)
            self.combos.append((rank, frozenset(pair), name))

        targets = data.extra.get("target_points")
        if not isinstance(targets, dict):
            raise fail("'target_points' must map each player count to the points that win")
        self.targets = {}
        for players in range(data.min_players, data.max_players + 1):
            points = targets.get(str(players))
            if isinstance(points, bool) or not isinstance(points, int) or points < 1:
                raise fail(f"'target_points' has no whole number >= 1 for {players} players")
            self.targets[players] = points

        # Optional: without [small_table], no table size sets an Assassin aside.
        small = data.extra.get("small_table", {})
        if not isinstance(small, dict):
            raise fail("'small_table' must be a table")
        self.small_table = small.get("players_at_most", 0)
        self.set_aside_card = small.get("set_aside")
        if isinstance(self.small_table, bool) or not isinstance(self.small_table, int):
            raise fail("'small_table.players_at_most' must be a whole number")
        if self.small_table >= data.min_players:
            card = data.cards.get(str(self.set_aside_card))
            if card is None or card["role"] != "assassin":
                raise fail("'small_table.set_aside' must be the id of an Assassin card")
            if copies["assassin"] < 2:
                raise fail("setting an Assassin aside needs at least two Assassins")
        else:
            self.set_aside_card = None

        if data.min_players < 2:
            raise fail("the game needs at least 2 players")
        for players in range(data.min_players, data.max_players + 1):
            in_play = len(data.cards) - (1 if self._sets_aside(players) else 0)
            dealable = in_play - copies["spy"]  # the Spy is never dealt
            if dealable < 2 * players or in_play - 2 * players < players:
                raise fail(f"{len(data.cards)} cards are too few to deal {players} players and keep a deck")

    def _sets_aside(self, players: int) -> bool:
        return self.set_aside_card is not None and players <= self.small_table

    def deck_size(self, players: int) -> int:
        """Cards in the deck right after the deal, for a table of `players`."""
        return len(self.data.cards) - (1 if self._sets_aside(players) else 0) - 2 * players

    def role(self, card_id: str) -> str:
        return self.data.cards[card_id]["role"]

    def notches(self, card_id: str) -> int:
        return self.data.cards[card_id]["notches"]

    # ------------------------------------------------------------------ setup and rounds

    def setup(self, players: list[str], options: dict[str, Any]) -> PeanutsState:
        """A new game: the first round's deal is done and each seat must tap its Role."""
        names = check_players(players, self.data.min_players, self.data.max_players)
        options = dict(options or {})
        unknown = sorted(set(options) - {"start", "target"})
        if unknown:
            raise GameError(f"Unknown option {unknown[0]!r}: the options are 'start' and 'target'.")
        start = seat_of(options, len(names), "start") if "start" in options else 0
        target = options.get("target", self.targets[len(names)])
        if isinstance(target, bool) or not isinstance(target, int) or target < 1:
            raise GameError("'target' must be a whole number of Peanut Points, 1 or more.")
        state = PeanutsState(players=names, target=target, scores=[0] * len(names))
        self._deal(state, start)
        return state

    def _deal(self, state: PeanutsState, start: int) -> None:
        """A round's setup: 2 cards each (the Spy never dealt), one of them face down as the Role."""
        n = len(state.players)
        state.status = Status.SETUP
        state.start = state.turn = start
        state.set_aside = self.set_aside_card if self._sets_aside(n) else None
        state.deck = self.deck_size(n)
        state.roles = [None] * n
        state.piles = [[] for _ in range(n)]
        state.hands = [1] * n
        state.eliminated = [False] * n
        state.shown = {}
        state.claim = None
        state.extra_turn = False
        state.result = None
        state.steps = [Step("reveal", seat) for seat in self._clockwise(n, start)]

    @staticmethod
    def _clockwise(n: int, first: int) -> list[int]:
        return [(first + k) % n for k in range(n)]

    def _active(self, state: PeanutsState) -> list[int]:
        return [s for s in range(len(state.players)) if not state.eliminated[s]]

    def _next_active(self, state: PeanutsState, seat: int) -> int:
        n = len(state.players)
        return next(s for s in self._clockwise(n, seat + 1) if not state.eliminated[s])

    def _begin_turn(self, state: PeanutsState, seat: int, *, extra: bool = False) -> None:
        state.turn = seat
        state.turns += 1
        state.steps = [Step("draw", seat, {"extra": extra})]

    def _end_turn(self, state: PeanutsState, cues: list[Cue]) -> None:
        """The turn's queue is empty: showdown if the deck is out, else the next (or extra) turn."""
        extra, state.extra_turn = state.extra_turn, False
        if state.deck == 0:
            self._start_showdown(state, cues)
        elif extra and not state.eliminated[state.turn]:
            cues.append(Cue("extra-turn", state.turn, f"{state.players[state.turn]} takes another turn."))
            self._begin_turn(state, state.turn, extra=True)
        else:
            self._begin_turn(state, self._next_active(state, state.turn))

    def _win_round(self, state: PeanutsState, winners: list[int], reason: str, cues: list[Cue]) -> None:
        """Score the round; end the game if somebody reached the target."""
        for seat in winners:
            state.scores[seat] += 1
        state.rounds.append({"round": state.round, "winners": list(winners), "reason": reason})
        state.claim = None
        state.steps = []
        cues.append(Cue("round-won", winners[0] if len(winners) == 1 else None, reason, {"winners": winners}))
        champions = [s for s, points in enumerate(state.scores) if points >= state.target]
        if champions:
            state.status = Status.GAME_OVER
            state.winners = champions
            names = _listing([state.players[s] for s in champions])
            cues.append(
                Cue("game-won", champions[0] if len(champions) == 1 else None, f"{names} won the game!")
            )
            return
        # The winner starts the next round; of tied winners, the first clockwise from the player who
        # ended the round (see docs/rules/peanuts.md).
        n = len(state.players)
        state.start = next(s for s in self._clockwise(n, state.turn + 1) if s in winners)
        state.steps = [Step("round-over", None)]

    # ------------------------------------------------------------------ what the table knows

    # Everything the table may be told (prompt, cue, refusal) is decided from what the whole table
    # sees. The face-down cards the companion recorded never decide anything but the showdown's
    # discard count: a tap of one is taken as proof that the record was wrong, never refused.

    def _place(self, state: PeanutsState, card_id: str) -> str | None:
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

    def _unplaced(self, state: PeanutsState, event: Event) -> Card:
        """The tapped card, refused if the table sees it somewhere else.

        A card the companion recorded face down is accepted: the physical card is the truth, so the
        face-down card is another one and its record becomes unknown (asked at the showdown if the
        discard piles decide). Refusing would tell the table where that card lies."""
        card = self.card(event)
        where = self._place(state, card.id)
        if where is not None:
            raise GameError(f"{card.name} ({card.id}) is {where}: it cannot be here.")
        for pile in state.piles:
            for discard in pile:
                if discard.card == card.id:
                    discard.card = None
        return card

    def _could_hold(self, state: PeanutsState, role: str) -> bool:
        """Whether the table may believe a card of `role` is in a hand: not every copy is in sight."""
        return any(
            card.get("role") == role and self._place(state, card.id) is None
            for card in self.data.cards.values()
        )

    def _role_at(self, state: PeanutsState, seat: int) -> str:
        """The role of `seat`'s Role card (every seat has one once the round is under way)."""
        card = state.roles[seat]
        assert card is not None
        return self.role(card)

    def _immune(self, state: PeanutsState, seat: int, threat: str) -> bool:
        role = state.roles[seat]
        return role is not None and threat in IMMUNE_TO.get(self.role(role), frozenset())

    def _pickable(self, state: PeanutsState, by: int, threat: str, *, self_ok: bool) -> list[int]:
        """Seats an action of `by` may pick: in the round, not protected from `threat`."""
        return [s for s in self._active(state) if (self_ok or s != by) and not self._immune(state, s, threat)]

    def _discard_face_up(self, state: PeanutsState, seat: int, card_id: str, cues: list[Cue]) -> None:
        """A card goes face up to `seat`'s pile, except the Spy, which goes back into the deck."""
        if self.role(card_id) == "spy":
            state.deck += 1
            cues.append(
                Cue("shuffle-in", seat, "The Spy goes back into the deck: shuffle it in.", {"card": card_id})
            )
        else:
            state.piles[seat].append(Discard(card_id, True))

    # ------------------------------------------------------------------ applying inputs

    def _apply(self, state: PeanutsState, event: Event) -> list[Cue]:
        if state.status is Status.GAME_OVER:
            raise GameError("The game is over.")
        before = self._asking(state)
        cues: list[Cue] = []
        if state.claim is not None:
            self._on_claim(state, event, cues)
        elif event["type"] == "claim-family":
            self._start_claim(state, event, cues)
        else:
            step = state.steps[0]
            getattr(self, "_on_" + step.kind.replace("-", "_"))(state, step, event, cues)
        if state.status is Status.PLAYING and not state.steps:
            self._end_turn(state, cues)
        after = self._asking(state)
        if after[0] is not None and after != before:
            cues.append(Cue("your-turn", after[0], self.prompt(state).text))
        return cues

    def _asking(self, state: PeanutsState) -> tuple[int | None, int]:
        return self.prompt(state).seat, state.turns

    def _refuse(self, state: PeanutsState) -> GameError:
        return GameError(f"Not now. {self.prompt(state).text}")

    def _expect(
        self, state: PeanutsState, step: Step, event: Event, *types: str, by_seat: bool = True
    ) -> None:
        """Refuse an input of another type, or (`by_seat`: its "seat" names who answers rather than
        whom it picks) from another seat than the one asked."""
        if event["type"] not in types:
            raise self._refuse(state)
        if not by_seat or step.seat is None or "seat" not in event:
            return
        if seat_of(event, len(state.players)) != step.seat:
            raise GameError(f"It is {state.players[step.seat]}'s move. {self.prompt(state).text}")

    def _flag(self, event: Event, key: str) -> bool:
        value = event.get(key)
        if not isinstance(value, bool):
            raise GameError(f"'{key}' must be true or false.")
        return value

    # Setup -----------------------------------------------------------------

    def _on_reveal(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        if event["type"] != "tap":
            raise self._refuse(state)
        seat = seat_of(event, len(state.players)) if "seat" in event else step.seat
        assert seat is not None
        if state.roles[seat] is not None:
            raise GameError(f"{state.players[seat]} has already shown their Role.")
        card = self._unplaced(state, event)
        if self.role(card.id) == "spy":
            raise GameError("The Spy is never dealt: it went back into the deck after the deal.")
        state.roles[seat] = card.id
        state.steps = [s for s in state.steps if s.seat != seat]
        cues.append(
            Cue("card-revealed", seat, f"{state.players[seat]}'s Role: {card.name}", {"card": card.id})
        )
        if not state.steps:
            state.status = Status.PLAYING
            self._begin_turn(state, state.start)

    # A turn ----------------------------------------------------------------

    def _on_draw(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "draw")
        if state.deck == 0:
            raise GameError("The deck is empty: there is nothing to draw.")
        seat = state.turn
        state.deck -= 1
        state.hands[seat] += 1
        state.steps[0] = Step("act", seat)
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} draws a card."))

    def _on_act(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap", "assist", "deploy")
        seat = state.turn
        if event["type"] == "tap":
            card = self._unplaced(state, event)
            step.info["card"] = card.id
            cues.append(Cue("card-accepted", seat, f"{state.players[seat]} plays the {card.name}."))
            return
        card_id = step.info.get("card")
        if card_id is None:
            raise GameError("First tap the card you play.")
        card = self.data.cards[card_id]
        state.steps.pop(0)
        state.hands[seat] -= 1
        name = state.players[seat]
        if event["type"] == "assist":
            self._discard_face_up(state, seat, card_id, cues)
            cues.append(
                Cue(
                    "card-accepted",
                    seat,
                    f"{name} discards the {card.name} for its ASSIST.",
                    {"card": card_id},
                )
            )
            self._run(ASSIST, self.role(card_id), state, seat, cues)
        else:
            old = state.roles[seat]
            assert old is not None
            state.roles[seat] = card_id
            self._discard_face_up(state, seat, old, cues)
            cues.append(
                Cue(
                    "card-revealed", seat, f"{name} deploys the {card.name} as their Role.", {"card": card_id}
                )
            )
            self._run(DEPLOY, self.role(card_id), state, seat, cues)

    def _run(
        self, table: dict[str, str | None], role: str, state: PeanutsState, seat: int, cues: list[Cue]
    ) -> None:
        method = table[role]
        if method is None:
            return
        getattr(self, method)(state, seat, cues)

    def _void(self, state: PeanutsState, seat: int, why: str, cues: list[Cue]) -> None:
        """The FAQ: an action that cannot be carried out in full is ignored as a whole."""
        cues.append(Cue("card-accepted", seat, f"Nothing happens: {why}.", {"void": True}))

    # ASSIST actions --------------------------------------------------------

    def _telepath_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        state.extra_turn = True
        name = state.players[seat]
        cues.append(Cue("card-accepted", seat, f"Everyone else shows {name} their hand; {name} plays again."))

    def _seer_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        if state.deck == 0:
            self._void(state, seat, "the deck is empty", cues)
            return
        state.steps.insert(0, Step("face-down", seat, {"look": min(3, state.deck)}))

    def _informant_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        seats = self._pickable(state, seat, "trade", self_ok=True)
        if len(seats) < 2:
            self._void(state, seat, "fewer than two players can trade hands", cues)
            return
        state.steps.insert(0, Step("trade", seat, {"seats": seats}))

    def _handler_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        state.steps.insert(0, Step("direction", seat))

    def _agent_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        seats = self._pickable(state, seat, "discard", self_ok=False)
        if not seats:
            self._void(state, seat, "no other player can be made to discard their hand", cues)
        elif state.deck == 0:
            self._void(state, seat, "the deck is empty, so the Agent cannot draw", cues)
        else:
            state.steps.insert(0, Step("target", seat, {"effect": "agent", "seats": seats}))

    def _secret_police_assist(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        seats = self._pickable(state, seat, "secret-police", self_ok=False)
        if not seats:
            self._void(state, seat, "no other player can be picked by the Secret Police", cues)
            return
        state.steps.insert(0, Step("target", seat, {"effect": "secret-police", "seats": seats}))

    # DEPLOY actions --------------------------------------------------------

    def _spy_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        if state.deck == 0:
            self._void(state, seat, "the deck is empty, so the Spy stays", cues)
            return
        state.steps.insert(0, Step("spy-swap", seat))

    def _seer_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        count = min(2, state.deck)
        if count == 0:
            self._void(state, seat, "the deck is empty", cues)
            return
        state.deck -= count
        state.hands[seat] += count
        state.steps.insert(0, Step("seer-draw", seat, {"count": count}))

    def _informant_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        if state.deck == 0:
            self._void(state, seat, "the deck is empty", cues)
            return
        # The player draws the top card; until they put a card back on top (`done`) they hold Role +
        # 2 cards and may claim Finding the Family (the FAQ counts this DEPLOY as a draw).
        state.deck -= 1
        state.hands[seat] += 1
        state.steps.insert(0, Step("informant-draw", seat))
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} draws the top card."))

    def _handler_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        if not any(state.piles):
            self._void(state, seat, "no discard pile holds a card", cues)
            return
        state.steps.insert(0, Step("take-back", seat))

    def _agent_deploy(self, state: PeanutsState, seat: int, cues: list[Cue]) -> None:
        seats = [s for s in self._active(state) if s != seat and ASSIST[self._role_at(state, s)] is not None]
        if not seats:
            self._void(state, seat, "no other player's Role has an ASSIST", cues)
            return
        state.steps.insert(0, Step("target", seat, {"effect": "agent-deploy", "seats": seats}))

    # Answers to the steps --------------------------------------------------

    def _on_target(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "target", by_seat=False)
        seat = state.turn
        target = seat_of(event, len(state.players))
        effect = step.info["effect"]
        if target not in step.info["seats"]:
            raise GameError(self._why_not(state, seat, target, effect))
        state.steps.pop(0)
        name, other = state.players[seat], state.players[target]
        cues.append(Cue("card-accepted", target, f"{name} picks {other}."))
        if effect == "agent":
            state.deck -= 1  # the Agent's player draws first (safe, even the Assassin)
            state.hands[seat] += 1
            state.steps.insert(0, Step("agent-discard", target, {"by": seat}))
        elif effect == "secret-police":
            state.steps.insert(0, Step("spy-found", seat, {"target": target}))
        elif effect == "handler-trade":
            # The hand card goes to the deck, the top card to the hand: the deck count stays.
            state.steps[0:0] = self._assassin_checks(state, [target])
        else:  # "agent-deploy": the ASSIST of the picked player's Role, carried out by `seat`
            role_card = state.roles[target]
            assert role_card is not None
            self._run(ASSIST, self.role(role_card), state, seat, cues)

    def _why_not(self, state: PeanutsState, seat: int, target: int, effect: str) -> str:
        name = state.players[target]
        if state.eliminated[target]:
            return f"{name} is out of this round."
        if target == seat:
            return "You must pick another player."
        role = state.roles[target]
        role_name = self.data.cards[role].name if role else "?"
        if effect == "agent-deploy":
            return f"{name}'s Role ({role_name}) has no ASSIST to use."
        return f"{name}'s Role ({role_name}) protects them from that."

    def _assassin_checks(self, state: PeanutsState, seats: list[int]) -> list[Step]:
        """Ask each player who received a card whether it was the Assassin (a Telepath Role is safe)."""
        return [Step("assassin-check", s) for s in seats if not self._immune(state, s, "assassin")]

    def _on_trade(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "trade")
        seats = event.get("seats")
        if not (isinstance(seats, list) and len(seats) == 2):
            raise GameError("'seats' must list the two players who trade hands.")
        a, b = (seat_of({"seat": s}, len(state.players)) for s in seats)
        if a == b:
            raise GameError("Two different players must trade hands.")
        for s in (a, b):
            if s not in step.info["seats"]:
                raise GameError(self._why_not(state, -1, s, "trade"))
        state.steps.pop(0)
        state.hands[a], state.hands[b] = state.hands[b], state.hands[a]
        cues.append(
            Cue("card-accepted", state.turn, f"{state.players[a]} and {state.players[b]} trade hands.")
        )
        state.steps[0:0] = self._assassin_checks(state, [a, b])

    def _on_direction(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "direction")
        direction = event.get("direction")
        if direction not in ("left", "right"):
            raise GameError('\'direction\' must be "left" or "right".')
        active = self._active(state)
        shift = 1 if direction == "left" else -1
        moved = {active[(k + shift) % len(active)]: state.roles[s] for k, s in enumerate(active)}
        for s, role in moved.items():
            state.roles[s] = role
        state.steps.pop(0)
        cues.append(Cue("card-accepted", state.turn, f"Every Role moves one seat to the {direction}."))

    def _on_face_down(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        seat = state.turn
        card = self._unplaced(state, event)
        state.steps.pop(0)
        state.deck -= 1
        state.piles[seat].append(Discard(card.id, False))
        # No name, no id: the whole table hears this cue.
        cues.append(Cue("card-accepted", seat, f"{state.players[seat]} discards a card face down."))

    def _on_take_back(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "take-back", "tap", by_seat=event["type"] == "tap")
        n = len(state.players)
        if event["type"] == "tap":  # a face-up card only: a face-down one is picked by its number
            card = self.card(event)
            found = [
                (s, i)
                for s in range(n)
                for i, d in enumerate(state.piles[s])
                if d.face_up and d.card == card.id
            ]
            if not found:
                raise GameError("Tap a card lying face up in a discard pile, or pick a card by its number.")
            owner, index = found[0]
        else:
            owner = seat_of(event, n)
            index = event.get("index")
            if (
                isinstance(index, bool)
                or not isinstance(index, int)
                or not 0 <= index < len(state.piles[owner])
            ):
                raise GameError(f"{state.players[owner]}'s discard pile has no card number {index}.")
        discard = state.piles[owner].pop(index)
        state.deck += 1
        state.steps.pop(0)
        if discard.face_up and discard.card is not None:
            what, data = f"the {self.data.cards[discard.card].name}", {"card": discard.card}
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
        seats = self._pickable(state, state.turn, "trade", self_ok=True)
        state.steps.insert(0, Step("target", state.turn, {"effect": "handler-trade", "seats": seats}))

    def _on_spy_found(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "spy-found")
        found = self._flag(event, "found")
        target = step.info["target"]
        if found and not self._could_hold(state, "spy"):  # only what everyone sees, see `_place`
            raise GameError("The Spy cannot be in that hand: it is in sight on the table.")
        state.steps.pop(0)
        if found:
            state.extra_turn = True
            state.steps.insert(0, Step("eliminate", target, {"role": "spy"}))
            cues.append(
                Cue(
                    "card-accepted",
                    target,
                    f"The Secret Police found the Spy: {state.players[target]} is out.",
                )
            )
        else:
            cues.append(Cue("card-accepted", target, "No Spy there."))

    def _on_assassin_check(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "assassin", "tap")
        if event["type"] == "assassin" and not self._flag(event, "received"):
            state.steps.pop(0)
            cues.append(Cue("card-accepted", step.seat, "No Assassin."))
            return
        if not self._could_hold(state, "assassin"):  # only what everyone sees, see `_place`
            raise GameError("No Assassin can be in that hand: every Assassin is in sight on the table.")
        state.steps[0] = Step("eliminate", step.seat, {"role": "assassin"})
        if event["type"] == "tap":  # the tap of the Assassin is the answer and the discard at once
            self._on_eliminate(state, state.steps[0], event, cues)

    def _on_eliminate(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        seat = step.seat
        assert seat is not None
        card = self._unplaced(state, event)
        wanted = step.info["role"]
        if self.role(card.id) != wanted:
            raise GameError(f"{state.players[seat]} must tap their hand card: the {self.role_names[wanted]}.")
        state.steps.pop(0)
        state.hands[seat] = 0
        self._discard_face_up(state, seat, card.id, cues)
        state.eliminated[seat] = True
        cues.append(
            Cue("player-eliminated", seat, f"{state.players[seat]} is out of this round.", {"card": card.id})
        )
        active = self._active(state)
        if len(active) == 1:
            self._win_round(state, active, f"{state.players[active[0]]} is the last player standing.", cues)

    def _on_agent_discard(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        target, by = step.seat, step.info["by"]
        assert target is not None
        card = self._unplaced(state, event)
        state.steps.pop(0)
        state.hands[target] -= 1
        self._discard_face_up(state, target, card.id, cues)
        # Then the target takes one card of the Agent player's hand: that one may be the Assassin.
        state.hands[target] += 1
        state.hands[by] -= 1
        cues.append(
            Cue(
                "card-accepted",
                target,
                f"{state.players[target]} discards the {card.name}, takes a card from {state.players[by]}.",
                {"card": card.id},
            )
        )
        state.steps[0:0] = self._assassin_checks(state, [target])

    def _on_seer_draw(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "done")
        count = step.info["count"]
        state.deck += count
        state.hands[state.turn] -= count
        state.steps.pop(0)
        cues.append(Cue("card-accepted", state.turn, f"{count} card(s) go under the deck."))

    def _on_informant_draw(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "done")
        state.deck += 1
        state.hands[state.turn] -= 1
        state.steps.pop(0)
        cues.append(Cue("card-accepted", state.turn, "A card goes back on top of the deck."))

    def _on_spy_swap(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        seat = state.turn
        card = self._unplaced(state, event)
        spy = state.roles[seat]
        state.roles[seat] = card.id  # the deck gives one card and takes the Spy: its count stays
        state.steps.pop(0)
        cues.append(Cue("shuffle-in", seat, "The Spy goes into the deck: shuffle it in.", {"card": spy}))
        cues.append(
            Cue("card-revealed", seat, f"{state.players[seat]}'s new Role: {card.name}", {"card": card.id})
        )

    # The end of a round ----------------------------------------------------

    def _start_showdown(self, state: PeanutsState, cues: list[Cue]) -> None:
        n = len(state.players)
        state.steps = [
            Step("showdown", s) for s in self._clockwise(n, state.turn + 1) if not state.eliminated[s]
        ]
        cues.append(Cue("showdown", None, "The deck is empty: everyone still in shows their hand."))

    def _on_showdown(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        if event["type"] != "tap":
            raise self._refuse(state)
        seat = seat_of(event, len(state.players)) if "seat" in event else step.seat
        if seat not in [s.seat for s in state.steps]:
            raise GameError("That player is not showing a hand now.")
        assert seat is not None
        card = self._unplaced(state, event)
        state.shown[seat] = card.id
        state.steps = [s for s in state.steps if s.seat != seat]
        cues.append(
            Cue("card-revealed", seat, f"{state.players[seat]} shows the {card.name}.", {"card": card.id})
        )
        if not state.steps:
            self._settle_showdown(state, cues)

    def _settle_showdown(self, state: PeanutsState, cues: list[Cue]) -> None:
        """Rank the shown hands. If the discard piles decide and a pile holds a face-down card whose
        record proved wrong (`_unplaced`), its owner first turns it over and taps it (`flip`)."""
        result = self._rank(state)
        flips = [
            Step("flip", seat, {"index": index})
            for seat in result["piles_counted"]
            for index, discard in enumerate(state.piles[seat])
            if discard.card is None
        ]
        if flips:
            state.steps = flips
            return
        state.result = result
        self._win_round(state, result["winners"], result["reason"], cues)

    def _on_flip(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "tap")
        seat, index = step.seat, step.info["index"]
        assert seat is not None
        card = self._unplaced(state, event)
        state.piles[seat][index].card = card.id  # it stays a back on the scoreboard: only totals show
        state.steps.pop(0)
        cues.append(
            Cue("card-accepted", seat, f"{state.players[seat]}'s face-down card #{index + 1} is counted.")
        )
        if not state.steps:
            self._settle_showdown(state, cues)

    def _pile_notches(self, state: PeanutsState, seat: int) -> int:
        """The notches of `seat`'s discard pile, face-down cards included (an unknown one is asked
        before a result is kept, see `_settle_showdown`)."""
        return sum(self.notches(d.card) for d in state.piles[seat] if d.card is not None)

    def combination(self, first: str, second: str) -> tuple[int, str] | None:
        """The combination two cards make (in either order), as (rank, name), or None."""
        pair = frozenset({self.role(first), self.role(second)})
        return next(((rank, name) for rank, roles, name in self.combos if roles == pair), None)

    def _rank(self, state: PeanutsState) -> dict[str, Any]:
        """The showdown: best combination, then fewest notches of Role and hand, then fewest notches
        in the discard pile (face-down cards included). A tie that survives all three shares the
        round (docs/rules/peanuts.md says why)."""
        names = state.players
        combo: dict[int, tuple[int, str] | None] = {}
        notches: dict[int, int] = {}
        for seat, card in state.shown.items():
            role = state.roles[seat]
            assert role is not None
            combo[seat] = self.combination(role, card)
            notches[seat] = self.notches(role) + self.notches(card)

        def rank(seat: int) -> int:
            found = combo[seat]
            return found[0] if found else NOT_FOUND

        best = min(rank(s) for s in combo)
        group = sorted(s for s in combo if rank(s) == best)
        if best == NOT_FOUND:
            lead = "Nobody holds a combination"
        else:
            held = {s: combo[s][1] for s in group}  # type: ignore[index]
            if len(group) == 1:
                reason = f"{names[group[0]]} wins the showdown with {held[group[0]]}."
                return self._result(group, reason, "combination", [])
            lead = _listing([f"{names[s]} ({held[s]})" for s in group]) + " hold equal combinations"

        low = min(notches[s] for s in group)
        tied = [s for s in group if notches[s] == low]
        if len(tied) == 1:
            reason = f"{lead}; {names[tied[0]]} has the fewest notches on Role and hand ({low})."
            return self._result(tied, reason, "notches", [])

        piles = {s: self._pile_notches(state, s) for s in tied}
        fewest = min(piles.values())
        final = [s for s in tied if piles[s] == fewest]
        lead = f"{lead}; {_listing([names[s] for s in tied])} tie on {low} notches"
        if len(final) == 1:
            reason = f"{lead}; {names[final[0]]} has the fewest notches in the discard pile ({fewest})."
            return self._result(final, reason, "discards", tied)
        reason = (
            f"{lead} and {fewest} in the discard pile: {_listing([names[s] for s in final])} share the round."
        )
        return self._result(final, reason, "tie", tied)

    @staticmethod
    def _result(winners: list[int], reason: str, decided_by: str, piles_counted: list[int]) -> dict[str, Any]:
        return {
            "winners": winners,
            "reason": reason,
            "decided_by": decided_by,
            "piles_counted": piles_counted,
        }

    def _on_round_over(self, state: PeanutsState, step: Step, event: Event, cues: list[Cue]) -> None:
        self._expect(state, step, event, "next-round")
        state.round += 1
        self._deal(state, state.start)
        cues.append(Cue("card-accepted", None, f"Round {state.round}: show your Roles."))

    # Finding the Family ----------------------------------------------------

    def _start_claim(self, state: PeanutsState, event: Event, cues: list[Cue]) -> None:
        step = state.steps[0] if state.steps else None
        if step is None or step.kind not in CLAIM_STEPS:
            raise GameError(
                "Finding the Family can only be claimed by the current player right after a draw."
            )
        if "seat" in event and seat_of(event, len(state.players)) != state.turn:
            raise GameError(f"Only {state.players[state.turn]} has just drawn.")
        state.claim = []
        cues.append(
            Cue("card-accepted", state.turn, f"{state.players[state.turn]} claims Finding the Family!")
        )

    def _on_claim(self, state: PeanutsState, event: Event, cues: list[Cue]) -> None:
        seat = state.turn
        name = state.players[seat]
        if event["type"] == "cancel-claim":
            state.claim = None
            cues.append(Cue("card-accepted", seat, f"{name} withdraws the claim."))
            return
        if event["type"] != "tap":
            raise self._refuse(state)
        if "seat" in event and seat_of(event, len(state.players)) != seat:
            raise GameError(f"Only {name} taps the cards of the claim.")
        assert state.claim is not None
        # The cards of a claim come from a hidden hand: until the third one wins, nothing the table
        # is told names them (a refusal only names a card everyone sees elsewhere). A card recorded
        # face down is not refused: the physical card is the truth (see `_unplaced`).
        card = self.card(event)
        own_role = state.roles[seat]
        where = None if card.id == own_role else self._place(state, card.id)
        if where is not None:
            raise GameError(f"False claim: {card.name} ({card.id}) is {where}.")
        role = self.role(card.id)
        if role not in FAMILY or any(self.role(c) == role for c in state.claim):
            raise GameError("False claim: tap one Spy, one Telepath and one Assassin.")
        from_hand = sum(1 for c in [*state.claim, card.id] if c != own_role)
        if from_hand > state.hands[seat]:
            raise GameError(f"False claim: {name} holds only {state.hands[seat]} card(s) besides their Role.")
        state.claim.append(card.id)
        tapped = len(state.claim)
        cues.append(Cue("card-accepted", seat, f"{name}: {tapped} of 3 cards tapped.", {"tapped": tapped}))
        if tapped == 3:
            cards = list(state.claim)  # the round is won: all three are shown now
            cues.append(Cue("family-found", seat, f"{name} brought the Forgers together!", {"cards": cards}))
            self._win_round(
                state, [seat], f"{name} found the family: the Spy, the Telepath and the Assassin.", cues
            )

    # ------------------------------------------------------------------ what the table sees

    def _card_view(self, card_id: str) -> dict[str, Any]:
        card = self.data.cards[card_id]
        return {"card": card.id, "name": card.name, "role": card["role"], "notches": card["notches"]}

    def _discard_view(self, discard: Discard) -> dict[str, Any]:
        if not discard.face_up or discard.card is None:
            return {"face_up": False}  # a back: no id, no name, no notches
        return {"face_up": True, **self._card_view(discard.card)}

    def public_view(self, state: PeanutsState) -> dict[str, Any]:
        players = []
        for seat, name in enumerate(state.players):
            role = state.roles[seat]
            protections = sorted(IMMUNE_TO.get(self.role(role), frozenset())) if role else []
            players.append(
                {
                    "seat": seat,
                    "name": name,
                    "score": state.scores[seat],
                    "eliminated": state.eliminated[seat],
                    "role": self._card_view(role) if role else None,
                    "protected_from": protections,
                    "hand_count": state.hands[seat],
                    "discards": [self._discard_view(d) for d in state.piles[seat]],
                }
            )
        return {
            "game": self.game,
            "status": state.status.value,
            "round": state.round,
            "players": players,
            "prompt": self.prompt(state).to_json(),
            "rounds": [dict(r) for r in state.rounds],
            "winners": list(state.winners),
            "target": state.target,
            "deck_count": state.deck,
            "turn": state.turn,
            "extra_turn": state.extra_turn,
            "set_aside": self._card_view(state.set_aside) if state.set_aside else None,
            "claim": None if state.claim is None else {"seat": state.turn, "tapped": len(state.claim)},
            "showdown": self._showdown_view(state),
        }

    def _showdown_view(self, state: PeanutsState) -> dict[str, Any] | None:
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
            combo = self.combination(role, card)
            hands.append(
                {
                    "seat": seat,
                    "role": self._card_view(role),
                    "hand": self._card_view(card),
                    "combination": combo[1] if combo else None,
                    "combination_rank": combo[0] if combo else None,
                    "notches": self.notches(role) + self.notches(card),
                    "discard_notches": self._pile_notches(state, seat) if seat in counted else None,
                }
            )
        return {
            "hands": hands,
            "winners": result.get("winners", []),
            "reason": result.get("reason"),
            "decided_by": result.get("decided_by"),
        }

    # The prompt ------------------------------------------------------------

    def status(self, state: PeanutsState) -> Status:
        return state.status

    def outcome(self, state: PeanutsState) -> Outcome | None:
        if state.status is not Status.GAME_OVER:
            return None
        names = _listing([state.players[s] for s in state.winners])
        return Outcome(tuple(state.winners), f"{names} reached {state.target} Peanut Points")

    def prompt(self, state: PeanutsState) -> Prompt:
        if state.status is Status.GAME_OVER:
            names = _listing([state.players[s] for s in state.winners])
            return Prompt(f"Game over: {names} won.", step="game-over")
        turn_name = state.players[state.turn]
        if state.claim is not None:
            text = f"{turn_name}: tap the Spy, the Telepath and the Assassin ({len(state.claim)} of 3)."
            return Prompt(text, state.turn, True, (Action("cancel-claim", "Cancel the claim"),), "claim")
        step = state.steps[0]
        text, tap, actions = getattr(self, "_ask_" + step.kind.replace("-", "_"))(state, step)
        if step.kind in CLAIM_STEPS:
            actions.append(Action("claim-family", f"{turn_name}: Finding the Family!"))
        return Prompt(text, step.seat, tap, tuple(actions), step.kind)

    def _seat_actions(self, state: PeanutsState, seats: list[int]) -> list[Action]:
        return [Action("target", state.players[s], {"seat": s}, seat=s) for s in seats]

    def _ask_reveal(self, state: PeanutsState, step: Step) -> Ask:
        return f"{state.players[step.seat or 0]}: tap your Role.", True, []

    def _ask_draw(self, state: PeanutsState, step: Step) -> Ask:
        extra = " (extra turn)" if step.info.get("extra") else ""
        return (
            f"{state.players[state.turn]}: draw a card{extra}.",
            False,
            [Action("draw", "Draw a card", primary=True)],
        )

    def _ask_act(self, state: PeanutsState, step: Step) -> Ask:
        name = state.players[state.turn]
        card_id = step.info.get("card")
        if card_id is None:
            return f"{name}: tap the card you play (for its ASSIST, or as your new Role).", True, []
        card = self.data.cards[card_id]
        old = state.roles[state.turn]
        old_name = self.data.cards[old].name if old else "Role"
        return (
            f"{name}: the {card.name}: ASSIST or DEPLOY? (or tap another card)",
            True,
            [
                Action("assist", f"Discard the {card.name} for its ASSIST"),
                Action("deploy", f"Deploy the {card.name} (the {old_name} goes to the discard pile)"),
            ],
        )

    def _ask_target(self, state: PeanutsState, step: Step) -> Ask:
        name = state.players[state.turn]
        texts = {
            "agent": "pick the player who discards their hand and takes a card from yours",
            "secret-police": "pick the player whose hand you look at",
            "handler-trade": "pick the player who swaps their hand for the top card of the deck",
            "agent-deploy": "pick the player whose Role's ASSIST you use",
        }
        return f"{name}: {texts[step.info['effect']]}.", False, self._seat_actions(state, step.info["seats"])

    def _ask_trade(self, state: PeanutsState, step: Step) -> Ask:
        names = state.players
        actions = [
            Action("trade", f"{names[a]} ⇄ {names[b]}", {"seats": [a, b]})
            for a, b in combinations(step.info["seats"], 2)
        ]
        return f"{names[state.turn]}: pick two players who trade hands.", False, actions

    def _ask_direction(self, state: PeanutsState, step: Step) -> Ask:
        actions = [
            Action("direction", "Pass the Roles left (clockwise)", {"direction": "left"}),
            Action("direction", "Pass the Roles right", {"direction": "right"}),
        ]
        return f"{state.players[state.turn]}: which way do the Roles move?", False, actions

    def _ask_face_down(self, state: PeanutsState, step: Step) -> Ask:
        look = step.info["look"]
        text = (
            f"{state.players[state.turn]}: look at the top {look} card(s), tap the one you discard face down."
        )
        return text, True, []

    def _ask_take_back(self, state: PeanutsState, step: Step) -> Ask:
        actions = []
        for seat, pile in enumerate(state.piles):
            for index, discard in enumerate(pile):
                what = (
                    self.data.cards[discard.card].name
                    if discard.face_up and discard.card is not None
                    else f"face-down card #{index + 1}"
                )
                label = f"{state.players[seat]}: {what}"
                actions.append(Action("take-back", label, {"seat": seat, "index": index}, seat=seat))
        text = f"{state.players[state.turn]}: pick a discarded card to shuffle back into the deck."
        return text, True, actions

    def _ask_spy_found(self, state: PeanutsState, step: Step) -> Ask:
        other = state.players[step.info["target"]]
        actions = [Action("spy-found", f"{other} has no Spy", {"found": False})]
        if self._could_hold(state, "spy"):
            actions.append(Action("spy-found", f"{other} has the Spy!", {"found": True}, confirm=True))
        return f"{state.players[state.turn]}: does {other} hold the Spy?", False, actions

    def _ask_assassin_check(self, state: PeanutsState, step: Step) -> Ask:
        actions = [Action("assassin", "No Assassin", {"received": False})]
        possible = self._could_hold(state, "assassin")
        if possible:
            actions.append(Action("assassin", "I received the Assassin", {"received": True}, confirm=True))
        text = f"{state.players[step.seat or 0]}: did you receive the Assassin?"
        return text + (" If so, tap it." if possible else ""), possible, actions

    def _ask_eliminate(self, state: PeanutsState, step: Step) -> Ask:
        wanted = self.role_names[step.info["role"]]
        return f"{state.players[step.seat or 0]} is out: tap your hand card (the {wanted}).", True, []

    def _ask_agent_discard(self, state: PeanutsState, step: Step) -> Ask:
        name, by = state.players[step.seat or 0], state.players[step.info["by"]]
        return f"{name}: tap your hand card to discard it, then take one card from {by}'s hand.", True, []

    def _ask_seer_draw(self, state: PeanutsState, step: Step) -> Ask:
        count = step.info["count"]
        text = (
            f"{state.players[state.turn]}: you drew {count}; put {count} card(s) on the bottom of the deck."
        )
        return text, False, [Action("done", "Done", primary=True)]

    def _ask_informant_draw(self, state: PeanutsState, step: Step) -> Ask:
        text = f"{state.players[state.turn]}: you drew the top card; put a card from your hand back on top."
        return text, False, [Action("done", "Done: a card is back on top", primary=True)]

    def _ask_spy_swap(self, state: PeanutsState, step: Step) -> Ask:
        text = f"{state.players[state.turn]}: tap the top card of the deck: it replaces the Spy as your Role."
        return text, True, []

    def _ask_flip(self, state: PeanutsState, step: Step) -> Ask:
        name, number = state.players[step.seat or 0], step.info["index"] + 1
        return f"The discard piles decide: {name}, turn over face-down card #{number} and tap it.", True, []

    def _ask_showdown(self, state: PeanutsState, step: Step) -> Ask:
        return f"Showdown: {state.players[step.seat or 0]}, tap your hand card.", True, []

    def _ask_round_over(self, state: PeanutsState, step: Step) -> Ask:
        last = state.rounds[-1]["reason"]
        actions = [Action("next-round", f"Deal round {state.round + 1}", primary=True)]
        return f"{last} Next round: {state.players[state.start]} starts.", False, actions
