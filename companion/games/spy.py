"""SPY: the companion as referee of a game of secret Spy Bases.

Each player holds one colour's cards in a secret order. When a player spies, the owner of the spied
card taps it; the companion knows whose turn it is (the spier) and, from the card's colour, whose card
it is (the owner), and answers as the rulebook demands:

- a Safe or Top Secret that is not the owner's Exposure Target: its type only ("It's a Safe");
- the Exposure Target (Safe 1, Safe 2, Top Secret 1, Top Secret 2, in that order): revealed for good;
  once Top Secret 2 is revealed its owner is out;
- an unlit Bomb: now lit (TSSSsss), and nobody learns which bomb;
- a lit Bomb: BOOM, the spier is out; the owner shows that bomb to everybody (so the cue names it),
  then it goes back lit and hidden;
- a card already face up: said so, and nothing changes.

Spying ends the turn; a player may also pass (they may have only moved their Spy). A player who drops
a card is out. The last player left wins.

The companion keeps the secrets the players' hands would keep: `public_view` and the cues never name
the number (nor the id) of a card that is not face up, nor which bomb is lit; only the `boom` cue
names the bomb that went off, which the rulebook has the owner show to the table. Movement is not tracked:
it is public (declared aloud) and needs no referee.

Inputs, as documented in ``docs/rules/spy.md``:

- ``{"type": "tap", "card": "spy/red-safe-1"}``: during setup a Spy card claims its colour for the
  seat the prompt asks (or for ``"seat"`` if the event carries one); during play the spied card,
  tapped by its owner (any ``"seat"`` is ignored: the colour names the owner);
- ``{"type": "claim", "seat": 0, "colour": "green"}``: claim a colour without its Spy card;
- ``{"type": "pass"}`` (optionally ``"seat"``, which must be the current player): end the turn
  without spying;
- ``{"type": "eliminate", "seat": 2}``: that player dropped a card and is out.

Options of `setup`: ``{"start": seat}``, the youngest player, who takes the first turn (default 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from companion.core.cues import Cue
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
    sentence,
    with_story,
)
from companion.games.catalog import Card, DataError, GameData

# The Exposure Target order, as (kind, number): both Safes, then both Top Secrets, ascending.
EXPOSURE_ORDER: tuple[tuple[str, int], ...] = (("safe", 1), ("safe", 2), ("top-secret", 1), ("top-secret", 2))
# What the scoreboard calls each step of the exposure track (fixed labels, the same for every player).
EXPOSURE_LABELS: tuple[str, ...] = ("Safe 1", "Safe 2", "Top Secret 1", "Top Secret 2")
# What the owner says aloud about a card that is not the target: the type, never the number.
TYPE_ANSWERS: dict[str, str] = {"safe": "It's a Safe", "top-secret": "It's a Top Secret"}
KINDS = ("spy", "safe", "top-secret", "bomb")


@dataclass(frozen=True)
class Base:
    """One colour's cards, as the rules look them up."""

    spy: str
    exposure: tuple[str, ...]  # card ids in Exposure Target order
    bombs: tuple[str, ...]  # the bombs every game uses
    extra_bombs: tuple[str, ...]  # the bombs only a two-player game uses


@dataclass(frozen=True)
class SpyRules:
    """The SPY card list, checked and indexed by colour once (`parse_rules`)."""

    colours: tuple[str, ...]
    two_player_colours: tuple[str, ...]
    bases: Mapping[str, Base]


# A card's place in its colour's base: (kind, number, extra), e.g. ("bomb", 2, True).
CardKey = tuple[str, int | None, bool]


def parse_rules(data: GameData) -> SpyRules:
    """Check the SPY card list and index it by colour; raise `DataError` naming the first problem.

    Every colour needs exactly one Spy, Safe 1, Safe 2, Top Secret 1, Top Secret 2, Bomb 1 and
    Bomb 2; each two-player colour also exactly one extra Bomb 2, and no other colour any.
    """
    where = f"SPY data ({data.game})"
    colours = _colours(data.extra.get("colours"), where)
    two = data.extra.get("two_player_colours")
    if not (isinstance(two, list) and len(two) == 2 and len(set(two)) == 2 and set(two) <= set(colours)):
        raise DataError(f"{where}: 'two_player_colours' must name two different colours of 'colours'")
    if data.min_players < 2 or data.max_players > len(colours):
        raise DataError(f"{where}: players must be 2 to {len(colours)} (one colour each)")
    found: dict[str, dict[CardKey, str]] = {c: {} for c in colours}
    for card in data.cards.values():
        key = _card_key(card, colours, two, where)
        cards = found[card.get("colour")]
        if key in cards:
            raise DataError(
                f"{where}: {card.get('colour')} has two cards of the same kind: {cards[key]} and {card.id}"
            )
        cards[key] = card.id
    bases = {colour: _base(colour, cards, colour in two, where) for colour, cards in found.items()}
    return SpyRules(tuple(colours), tuple(two), MappingProxyType(bases))


def _colours(colours: Any, where: str) -> list[str]:
    if not (
        isinstance(colours, list)
        and colours
        and all(isinstance(c, str) and c for c in colours)
        and len(set(colours)) == len(colours)
    ):
        raise DataError(f"{where}: 'colours' must be a list of distinct colour names")
    return colours


def _card_key(card: Card, colours: list[str], two: list[str], where: str) -> CardKey:
    """Where a card belongs in its colour's base; refuse a stray one."""
    colour, kind, number = card.get("colour"), card.get("kind"), card.get("number")
    extra = card.get("extra", False)
    if colour not in colours:
        raise DataError(f"{where}: card {card.id} has colour {colour!r}, not one of {colours}")
    if kind not in KINDS:
        raise DataError(f"{where}: card {card.id} has kind {kind!r}, not one of {list(KINDS)}")
    if kind == "spy" and number is not None:
        raise DataError(f"{where}: card {card.id} is a Spy and must have no number")
    if kind != "spy" and (isinstance(number, bool) or number not in (1, 2)):
        raise DataError(f"{where}: card {card.id} must have number 1 or 2")
    if not isinstance(extra, bool) or (extra and (kind, number) != ("bomb", 2)):
        raise DataError(f"{where}: card {card.id}: only a Bomb 2 may be marked extra = true")
    if extra and colour not in two:
        raise DataError(f"{where}: card {card.id}: extra bombs belong only to the two-player colours {two}")
    return kind, number, extra


def _base(colour: str, cards: dict[CardKey, str], two_player: bool, where: str) -> Base:
    """A colour's base, refused if a card is missing."""
    needed: list[CardKey] = [("spy", None, False), *((k, n, False) for k, n in EXPOSURE_ORDER)]
    needed += [("bomb", 1, False), ("bomb", 2, False)]
    if two_player:
        needed.append(("bomb", 2, True))
    missing = [key for key in needed if key not in cards]
    if missing:
        names = ", ".join(_describe(*key) for key in missing)
        raise DataError(f"{where}: {colour} lacks its {names}")
    return Base(
        spy=cards[("spy", None, False)],
        exposure=tuple(cards[(k, n, False)] for k, n in EXPOSURE_ORDER),
        bombs=(cards[("bomb", 1, False)], cards[("bomb", 2, False)]),
        extra_bombs=(cards[("bomb", 2, True)],) if two_player else (),
    )


@dataclass
class SpyState:
    """The whole game, secrets included (the lit bombs). Only `Spy.public_view` leaves the engine.

    `exposed[seat]` counts how many cards of the seat's exposure order are face up: the order is
    fixed, so the count says which ones. `lit[seat]` holds the ids of the seat's lit bombs, which
    the public view reduces to a number.
    """

    players: list[str]
    start: int
    status: Status = Status.SETUP
    colours: list[str | None] = field(default_factory=list)
    turn: int | None = None
    eliminated: list[bool] = field(default_factory=list)
    exposed: list[int] = field(default_factory=list)
    lit: list[list[str]] = field(default_factory=list)
    last_outcome: dict[str, Any] | None = None
    outcomes: list[dict[str, Any] | None] = field(default_factory=list)  # the last one per seat
    winners: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the story: public sentences only, never a number


class Spy(Engine[SpyState]):
    """The SPY referee. Pure: `apply(state, event)` returns a new state and the cues to play."""

    game = "spy"
    action_keys = {
        "claim": frozenset({"seat", "colour"}),
        "pass": frozenset({"seat"}),
        "eliminate": frozenset({"seat"}),
    }
    options = (SetupOption("start", "Start player (the youngest)", "seat", 0),)

    def __init__(self, data: GameData) -> None:
        self.rules = parse_rules(data)
        super().__init__(data)

    @property
    def bases(self) -> Mapping[str, Base]:
        """Each colour's cards."""
        return self.rules.bases

    # ----------------------------------------------------------------- setup

    def setup(self, players: list[str], options: dict[str, Any]) -> SpyState:
        """A new game: 2 to 4 players, no colour claimed yet. Option ``start``: the first seat."""
        names = check_players(players, self.data.min_players, self.data.max_players)
        options = options or {}
        if not isinstance(options, dict):
            raise GameError('Options must be an object such as {"start": 0}.')
        unknown = sorted(set(options) - {"start"})
        if unknown:
            raise GameError(f"SPY has no option {', '.join(unknown)}; its only option is 'start'.")
        start = seat_of(options, len(names), "start") if "start" in options else 0
        count = len(names)
        return SpyState(
            players=names,
            start=start,
            colours=[None] * count,
            eliminated=[False] * count,
            exposed=[0] * count,
            lit=[[] for _ in range(count)],
            outcomes=[None] * count,
        )

    # ----------------------------------------------------------------- rules

    def _apply(self, state: SpyState, event: Event) -> list[Cue]:
        kind = event["type"]
        if kind == "tap":
            card = self.card(event)
            if state.status is Status.SETUP:
                cues = self._claim(state, self._claiming_seat(state, event), card.get("colour"), card)
            else:
                cues = self._spy(state, card)
        elif kind == "claim":
            if state.status is not Status.SETUP:
                raise GameError("Every colour is already claimed: the game is under way.")
            colour = event.get("colour")
            if not isinstance(colour, str):
                raise GameError('A claim needs a colour, such as {"colour": "green"}.')
            cues = self._claim(state, seat_of(event, len(state.players)), colour, None)
        elif kind == "pass":
            cues = self._pass(state, event)
        elif kind == "eliminate":
            cues = self._drop(state, seat_of(event, len(state.players)))
        else:
            raise GameError(f"SPY has no action {kind!r}: use tap, claim, pass or eliminate.")
        return cues

    def _claiming_seat(self, state: SpyState, event: Event) -> int:
        """The seat a Spy card tapped during setup is for: the event's, else the one the prompt asks."""
        if event.get("seat") is not None:
            return seat_of(event, len(state.players))
        return state.colours.index(None)  # setup means at least one seat has no colour yet

    def _claim(self, state: SpyState, seat: int, colour: str, card: Card | None) -> list[Cue]:
        """`seat` takes `colour` (by its Spy card `card`, or by the control page when None)."""
        name = state.players[seat]
        if card is not None and card.get("kind") != "spy":
            # Never name the card: the player may already have sorted their Spy Base.
            raise GameError(f"Setup first: {name}, tap the Spy card of the colour you play.")
        if colour not in self.bases:
            raise GameError(f"SPY has no colour {colour!r}: choose from {', '.join(self.rules.colours)}.")
        allowed = self._allowed_colours(state)
        if colour not in allowed:
            raise GameError(f"A two-player game is played with {' and '.join(allowed)} only, not {colour}.")
        if state.colours[seat] is not None:
            raise GameError(f"{name} already plays {state.colours[seat]}.")
        if colour in state.colours:
            raise GameError(
                f"{colour.capitalize()} is already {state.players[state.colours.index(colour)]}'s."
            )
        state.colours[seat] = colour
        state.log.append(f"{name} plays {colour}.")
        cues = [Cue("card-accepted", seat=seat, text=f"{name} plays {colour}", data={"colour": colour})]
        if None not in state.colours:
            state.status = Status.PLAYING
            state.turn = state.start
        return cues

    def _spy(self, state: SpyState, card: Card) -> list[Cue]:
        """The owner tapped the card the current player spies on; answer it."""
        if state.status is Status.GAME_OVER:
            raise GameError(f"The game is over: {self._winner_text(state)}.")
        assert state.turn is not None  # playing always has a current player
        spier, colour = state.turn, card.get("colour")
        base = self.bases[colour]
        if card.id in base.extra_bombs and len(state.players) != 2:
            # Named by kind only, so the refusal reads the same whatever card it is.
            raise GameError("That card is an extra bomb, only used in two-player games: it is not in play.")
        if colour not in state.colours:
            raise GameError(f"Nobody plays {colour} in this game: that card is not in play.")
        if card.get("kind") == "spy":
            raise GameError(
                "The Spy card can't be spied: the owner taps the card the spier's Spy faces in their base."
            )
        owner = state.colours.index(colour)
        # From here on the card may be a secret one: refusals must not name it.
        if owner == spier:
            raise GameError(f"{state.players[spier]}, that card is your own: spy on an opponent's card.")
        if state.eliminated[owner]:
            raise GameError(f"{state.players[owner]} is out: their cards can no longer be spied.")
        cues = self._answer(state, card, spier, owner)
        # Spying ends the turn, whether or not the spier survived it.
        if state.status is Status.PLAYING:
            state.turn = self._next_alive(state, spier)
        return cues

    def _answer(self, state: SpyState, card: Card, spier: int, owner: int) -> list[Cue]:
        """What the owner answers about their `card` that `spier` spied, and what it does."""
        who, whose = state.players[spier], state.players[owner]
        order = self.bases[card.get("colour")].exposure
        cues: list[Cue] = []
        if card.id in order and order.index(card.id) < state.exposed[owner]:
            # Face up already: nothing to learn, but the Spy action is spent (see docs/rules/spy.md).
            text = f"{card.name} is already exposed: nothing new."
            cues.append(_cue("already-exposed", owner, text, spier, owner, card=card))
            self._record(
                state, "already-exposed", spier, owner, f"{who} spied {whose}'s {card.name}, already exposed."
            )
        elif card.id in order and order.index(card.id) == state.exposed[owner]:
            state.exposed[owner] += 1
            text = f"{card.name} is exposed"
            cues.append(_cue("card-revealed", owner, text, spier, owner, card=card))
            self._record(state, "revealed", spier, owner, f"{who} exposed {whose}'s {card.name}.")
            if state.exposed[owner] == len(order):
                cues += self._eliminate(state, owner, f"{whose} is out: {card.name} is exposed")
        elif card.id in order:
            answer = TYPE_ANSWERS[card.get("kind")]
            cues.append(_cue("spied", owner, answer, spier, owner, type=card.get("kind")))
            self._record(state, "spied", spier, owner, f"{who} spied on {whose}: {answer}.")
        elif card.id in state.lit[owner]:
            # The owner shows the lit bomb to every player, then puts it back lit and hidden: the cue
            # (the moment it is shown) names it, the scoreboard's record of the outcome does not.
            shown = f"BOOM! {who} spied {whose}'s lit {card.name}"
            cues.append(_cue("boom", owner, shown, spier, owner, card=card))
            self._record(state, "boom", spier, owner, f"BOOM! {who} spied a lit bomb in {whose}'s base.")
            cues += self._eliminate(state, spier, f"{who} is out: BOOM")
        else:
            state.lit[owner].append(card.id)
            text = f"TSSSsss: a bomb in {whose}'s base is lit"
            cues.append(_cue("bomb-lit", owner, text, spier, owner))
            self._record(state, "bomb-lit", spier, owner, f"{who} lit a bomb in {whose}'s base: TSSSsss.")
        return cues

    def _pass(self, state: SpyState, event: Event) -> list[Cue]:
        """End the current player's turn without spying."""
        if state.status is not Status.PLAYING:
            raise GameError(self._not_playing(state))
        assert state.turn is not None
        if event.get("seat") is not None and seat_of(event, len(state.players)) != state.turn:
            raise GameError(
                f"It is {state.players[state.turn]}'s turn, not {state.players[event['seat']]}'s."
            )
        seat, name = state.turn, state.players[state.turn]
        self._record(state, "pass", seat, None, f"{name} passed.")
        state.turn = self._next_alive(state, seat)
        return [Cue("card-accepted", seat=seat, text=f"{name} passed")]

    def _drop(self, state: SpyState, seat: int) -> list[Cue]:
        """`seat` dropped a card: out at once, whoever's turn it is."""
        name = state.players[seat]
        if state.status is not Status.PLAYING:
            raise GameError(self._not_playing(state))
        if state.eliminated[seat]:
            raise GameError(f"{name} is already out.")
        self._record(state, "dropped", None, seat, f"{name} dropped a card and is out.")
        cues = self._eliminate(state, seat, f"{name} is out: a card was dropped", logged=True)
        if state.status is Status.PLAYING and state.turn == seat:
            state.turn = self._next_alive(state, seat)
        return cues

    def _eliminate(self, state: SpyState, seat: int, text: str, logged: bool = False) -> list[Cue]:
        """Put `seat` out (`logged`: the log already says so); if one player is left, they win."""
        state.eliminated[seat] = True
        if not logged:
            state.log.append(sentence(text))
        cues = [Cue("player-eliminated", seat=seat, text=text)]
        alive = [s for s, out in enumerate(state.eliminated) if not out]
        if len(alive) == 1:
            state.status = Status.GAME_OVER
            state.turn = None
            state.winners = alive
            cues.append(Cue("game-won", seat=alive[0], text=f"{state.players[alive[0]]} wins"))
            state.log.append(f"{state.players[alive[0]]} wins.")
        return cues

    def _record(self, state: SpyState, kind: str, spier: int | None, owner: int | None, text: str) -> None:
        """Remember an outcome for the banner and for each player it concerns."""
        outcome = {"kind": kind, "spier": spier, "owner": owner, "text": text}
        state.last_outcome = outcome
        state.log.append(text)
        for seat in {s for s in (spier, owner) if s is not None}:
            state.outcomes[seat] = outcome

    # --------------------------------------------------------------- helpers

    def _allowed_colours(self, state: SpyState) -> tuple[str, ...]:
        return self.rules.two_player_colours if len(state.players) == 2 else self.rules.colours

    @staticmethod
    def _next_alive(state: SpyState, seat: int) -> int:
        """The next seat clockwise after `seat` that is still in the game."""
        count = len(state.players)
        for step in range(1, count + 1):
            candidate = (seat + step) % count
            if not state.eliminated[candidate]:
                return candidate
        raise AssertionError("no player left")  # _eliminate ends the game before this can happen

    @staticmethod
    def _winner_text(state: SpyState) -> str:
        return " and ".join(state.players[s] for s in state.winners) + " won"

    def _not_playing(self, state: SpyState) -> str:
        if state.status is Status.SETUP:
            return "The game has not started: every player must claim a colour first."
        return f"The game is over: {self._winner_text(state)}."

    # ------------------------------------------------------------ public view

    def status(self, state: SpyState) -> Status:
        return state.status

    def outcome(self, state: SpyState) -> Outcome | None:
        if state.status is not Status.GAME_OVER:
            return None
        return Outcome(tuple(state.winners), f"{self._winner_text(state)}: the last spy standing")

    def prompt(self, state: SpyState) -> Prompt:
        if state.status is Status.SETUP:
            seat = state.colours.index(None)
            name = state.players[seat]
            free = [c for c in self._allowed_colours(state) if c not in state.colours]
            claims = tuple(
                Action("claim", f"{name} plays {c}", {"seat": seat, "colour": c}, seat=seat) for c in free
            )
            return Prompt(f"{name}: tap the Spy card of your colour", seat, True, claims)
        if state.status is Status.PLAYING:
            assert state.turn is not None
            name = state.players[state.turn]
            actions = [Action("pass", f"{name} passes (end the turn)", primary=True)]
            actions += [
                Action("eliminate", f"{state.players[s]} dropped a card", {"seat": s}, seat=s, confirm=True)
                for s in range(len(state.players))
                if not state.eliminated[s]
            ]
            text = f"{name}'s turn: spy (the owner taps the card) or pass"
            return Prompt(text, state.turn, True, tuple(actions))
        return Prompt(f"Game over: {self._winner_text(state)}")

    def public_view(self, state: SpyState) -> dict[str, Any]:
        """The scoreboard: colours, exposure tracks, lit-bomb counts, outcomes. No hidden number."""
        bombs = 3 if len(state.players) == 2 else 2
        players = []
        for seat, name in enumerate(state.players):
            exposed = state.exposed[seat]
            out = state.eliminated[seat]
            players.append(
                {
                    "seat": seat,
                    "name": name,
                    "score": 1 if seat in state.winners else 0,
                    "eliminated": out,
                    "colour": state.colours[seat],
                    # Fixed labels in a fixed order: only how many are face up depends on play.
                    "exposure": [
                        {"card": label, "revealed": i < exposed} for i, label in enumerate(EXPOSURE_LABELS)
                    ],
                    "next": None if out or exposed >= len(EXPOSURE_LABELS) else exposed,
                    "bombs_lit": len(state.lit[seat]),
                    "bombs": bombs,
                    "last_outcome": _copy(state.outcomes[seat]),
                }
            )
        view = {
            "game": self.game,
            "status": state.status.value,
            "round": 1,
            "players": players,
            "prompt": self.prompt(state).to_json(),
            "rounds": [],
            "winners": list(state.winners),
            "turn": state.turn,
            "start": state.start,
            "last_outcome": _copy(state.last_outcome),
        }
        return with_story(view, state.log, self.outcome(state))


def _cue(
    name: str, seat: int, text: str, spier: int, owner: int, card: Card | None = None, **data: Any
) -> Cue:
    """A spy outcome cue; `card` is given only for a card the table sees (face up, or a bomb going
    off), which may be named."""
    details: dict[str, Any] = {"spier": spier, "owner": owner, **data}
    if card is not None:
        details.update(card=card.id, name=card.name)
    return Cue(name, seat=seat, text=text, data=details)


def _copy(outcome: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if outcome is None else dict(outcome)


def _describe(kind: str, number: int | None, extra: bool) -> str:
    label = {"spy": "Spy", "safe": "Safe", "top-secret": "Top Secret", "bomb": "Bomb"}[kind]
    label = label if number is None else f"{label} {number}"
    return f"extra {label}" if extra else label
