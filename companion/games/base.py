"""What every game engine shares: the contract the table, the buttons, the LEDs and the pages rely on.

An engine is pure: `apply(state, event) -> (state, cues)` does no I/O, reads no clock and draws no
random number. It never changes the state it is given: an illegal event raises `GameError` with a
sentence a player understands, and the caller keeps the old state. The only thing the web ever sees
is `public_view(state)`, which must leave out everything the physical game keeps hidden.

Events are plain JSON-able dicts, exactly as the journal stores them:

- a card tap: ``{"type": "tap", "card": "spy-team/red-17"}``, plus ``"seat": 2`` when the reader that
  read it belongs to seat 2 (a shared reader sends no seat: the engine takes it from its prompt);
- any other input: ``{"type": "<action>", ...}`` with only the keys the engine declares for that
  action (`Engine.action_keys`), as each game documents in ``docs/rules/``.

What an engine expects next is typed: `prompt(state)` returns a `Prompt` (whom it asks, whether a
card tap is expected, and every legal non-card input as an `Action`), `status(state)` a `Status` and
`outcome(state)` an `Outcome` once the game is over. The queries `legal_actions`, `current_seat`,
`is_over` and `winners` are what the table, the buttons and the tests use; nobody reads them back
from the rendered view.

The public view carries at least::

    {"game": "spy-team", "status": "playing" | "game-over", "round": 1,
     "players": [{"seat": 0, "name": "Ann", "score": 0, "eliminated": false}, ...],
     "prompt": {...}, "rounds": [{"round": 1, "winners": [1, 3], "reason": "..."}], "winners": [],
     "log": ["Ann played Red 17.", ...], "summary": []}

The log is the game's story in players' words, one short public sentence per thing the table saw
(its state keeps it: `told(cues)` is what most of it comes from); the summary is empty until the game
is over, then a few lines for the whole game (`with_story`).

with the prompt rendered by `Prompt.to_json`::

    {"text": "Ann: play a card", "seat": 0, "tap": true,
     "actions": [{"type": "pass", "label": "Pass", "primary": true, "confirm": false}, ...]}
"""

from __future__ import annotations

import copy
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from companion.core.cues import Cue
from companion.games.catalog import Card, GameData

Event = dict[str, Any]
S = TypeVar("S")

_IMMUTABLE = frozenset({str, int, float, bool, bytes, type(None)})


def copy_state(value: S) -> S:
    """A deep copy of a game state, as `apply` makes before every event: the same as
    `copy.deepcopy` for plain data (dataclasses with a `__dict__`, lists, dicts, tuples, strings,
    numbers, None, enums) at about a quarter of its cost, since it keeps no memo of what it copied. That
    is right because a state never holds one mutable object in two places (tests/games/
    test_state_copy.py plays every game to check it). Anything else goes to `copy.deepcopy`."""
    return _copied(value)  # type: ignore[no-any-return]


def _copied(value: Any) -> Any:
    kind = type(value)
    if kind in _IMMUTABLE:
        return value
    copier = _COPIERS.get(kind)
    if copier is not None:
        return copier(value)
    if isinstance(value, Enum):
        return value
    if dataclasses.is_dataclass(value) and hasattr(value, "__dict__"):
        new = object.__new__(kind)  # as deepcopy does: no __init__, no __post_init__
        new.__dict__.update(_copied_dict(value.__dict__))
        return new
    return copy.deepcopy(value)


# Strings and numbers are kept as they are, without a call each: most of a state is its story.
def _copied_list(items: list[Any]) -> list[Any]:
    return [item if type(item) in _IMMUTABLE else _copied(item) for item in items]


def _copied_dict(items: Mapping[Any, Any]) -> dict[Any, Any]:
    return {key: item if type(item) in _IMMUTABLE else _copied(item) for key, item in items.items()}


def _copied_tuple(items: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(item if type(item) in _IMMUTABLE else _copied(item) for item in items)


_COPIERS: dict[type, Callable[[Any], Any]] = {list: _copied_list, dict: _copied_dict, tuple: _copied_tuple}


MAX_CARD_ID = 64
MAX_NAME = 24  # what fits on a seat of the scoreboard

# What a prompt's action carries for the pages and the buttons, never part of the input itself: a
# client may post an action back with them, and they are dropped before it is checked and journaled.
PRESENTATION_KEYS = frozenset({"label", "primary", "confirm", "hold", "button", "tablet", "button_seat"})


class GameError(Exception):
    """An input the rules refuse. `str(error)` is shown to the players as it is."""

    def __init__(self, message: str, cue: str = "error") -> None:
        super().__init__(message)
        self.cue = cue


class MalformedInput(GameError):
    """An input that is not one the game knows how to read (a key no action declares): the API
    answers 400 rather than 409, since no state of the game would accept it."""


class Status(StrEnum):
    """Where a game stands. `IDLE` is the table's own, before any game starts."""

    IDLE = "idle"
    SETUP = "setup"
    PLAYING = "playing"
    GAME_OVER = "game-over"


@dataclass(frozen=True)
class Action:
    """One legal non-card input, ready to post.

    `fields` are the input's keys besides its type; `seat` is the seat this action picks (what a seat
    button means: a target, a player to claim for), None when it picks none; `primary` marks the one
    action that moves the game on without a choice (the Next button, the big button of the control
    page); `confirm` an action grave enough to need a second tap (putting a player out).

    How a button gives it: a press of the seat button `seat` (Next for the `primary` action), or,
    with `hold`, that seat button held (`undo_hold` seconds, like Undo): the hold is the confirmation
    a bump cannot give, so a `confirm` action is posted by a hold and never by a press. `button`
    False: no button posts it (the tablet only, such as a colour other than the one picked);
    `tablet` False: the control page does not offer it (a button's own step, such as picking the
    next choice, which the tablet makes at once).
    """

    type: str
    label: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    seat: int | None = None
    primary: bool = False
    confirm: bool = False
    hold: bool = False
    button: bool = True
    tablet: bool = True

    def to_event(self) -> Event:
        """The input this action posts, as the journal keeps it: no label, no presentation."""
        return {"type": self.type, **self.fields}

    def to_json(self) -> dict[str, Any]:
        """The action for the pages; `hold`, `button` and `tablet` only when they are not the default,
        `button_seat` (the seat button that gives it) only when it is not the input's own `seat`."""
        rendered = {**self.to_event(), "label": self.label, "primary": self.primary, "confirm": self.confirm}
        if self.seat is not None and self.fields.get("seat") != self.seat:
            rendered["button_seat"] = self.seat
        if self.hold:
            rendered["hold"] = True
        if not self.button:
            rendered["button"] = False
        if not self.tablet:
            rendered["tablet"] = False
        return rendered


@dataclass(frozen=True)
class Prompt:
    """What the table expects next. `seat` is whom it asks (None: anyone, e.g. the host), `tap`
    whether a card tap is expected, `actions` every legal non-card input; `step` names the kind of
    question for a game's renderer (Mission for Peanuts), None for games that need none."""

    text: str
    seat: int | None = None
    tap: bool = False
    actions: tuple[Action, ...] = ()
    step: str | None = None

    def to_json(self) -> dict[str, Any]:
        rendered: dict[str, Any] = {
            "text": self.text,
            "seat": self.seat,
            "tap": self.tap,
            "actions": [action.to_json() for action in self.actions],
        }
        if self.step is not None:
            rendered["step"] = self.step
        return rendered


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: the seats that won it and why, in words for the table."""

    winners: tuple[int, ...]
    reason: str


@dataclass(frozen=True)
class SetupOption:
    """An option of `Engine.setup`: its name, its caption, its kind ("seat": a seat number, "int": a
    whole number) and its default (None: decided by the engine, e.g. from the player count)."""

    name: str
    label: str
    kind: str
    default: int | None = None


class Engine(ABC, Generic[S]):
    """Base of the game engines. Subclasses implement `setup`, `_apply` (which may mutate the copy it
    is given), `prompt`, `status`, `outcome` and `public_view`, and declare `action_keys` and
    `options`."""

    game: ClassVar[str]
    # Every action type the game reads from the control page, with the keys it may carry besides
    # "type". Only these keys are journaled; any other is refused as malformed.
    action_keys: ClassVar[Mapping[str, frozenset[str]]] = {}
    options: ClassVar[tuple[SetupOption, ...]] = ()

    def __init__(self, data: GameData) -> None:
        """An engine for `data`. A game that needs more of its data than the catalog checks parses it
        here, once, with a pure function into frozen dataclasses (`parse_rules` in each game), which
        raises `companion.games.catalog.DataError` naming what is wrong."""
        self.data = data

    @property
    def title(self) -> str:
        return self.data.title

    @property
    def players(self) -> range:
        """The player counts the game takes."""
        return range(self.data.min_players, self.data.max_players + 1)

    def option_defaults(self, players: int) -> dict[str, Any]:
        """The options `setup` takes for a table of `players` when none is given (the new-game form
        shows them). A game whose default depends on its data or the player count overrides this."""
        return {option.name: option.default for option in self.options if option.default is not None}

    @abstractmethod
    def setup(self, players: list[str], options: dict[str, Any]) -> S:
        """The state of a new game. Raises GameError for a wrong player count or a bad option."""

    def apply(self, state: S, event: Event) -> tuple[S, list[Cue]]:
        """Apply one event to a copy of `state`; return the new state and its cues."""
        return self.apply_to_copy(copy_state(state), event)

    def apply_to_copy(self, own_copy: S, event: Event) -> tuple[S, list[Cue]]:
        """`apply` on a copy of the state (`copy_state`) that the caller made and hands over: it
        becomes the new state, or after a GameError is left half-changed, to be dropped. The table
        makes its copy ahead of the next input (companion.table.table: `Table._spare`)."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise GameError("An input needs a type.")
        cues = self._apply(own_copy, event)
        return own_copy, cues

    @abstractmethod
    def _apply(self, state: S, event: Event) -> list[Cue]:
        """Mutate `state` (a private copy) by `event`; raise GameError before mutating anything
        the caller could see half-done (the copy is thrown away on error anyway)."""

    @abstractmethod
    def prompt(self, state: S) -> Prompt:
        """What the table expects next."""

    @abstractmethod
    def status(self, state: S) -> Status:
        """Setup, playing or over."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """Who won the game and why, once it is over; None before."""

    @abstractmethod
    def public_view(self, state: S) -> dict[str, Any]:
        """What anyone at the table may see, prompt included (`Prompt.to_json`)."""

    # Queries: the one place the table, the buttons and the tests learn what the game expects.

    def legal_actions(self, state: S) -> tuple[Action, ...]:
        """Every non-card input the rules accept now (a card tap is legal when `prompt().tap`)."""
        return self.prompt(state).actions

    def current_seat(self, state: S) -> int | None:
        """The seat the game waits on (its "your turn"), None when it waits on anyone or is over."""
        return self.prompt(state).seat

    def turn_number(self, state: S) -> int:
        """How many turns have begun. A new turn is "your turn" even for the seat that just played
        (an extra turn); a game without extra turns may leave this at 0."""
        return 0

    def is_over(self, state: S) -> bool:
        return self.status(state) is Status.GAME_OVER

    def winners(self, state: S) -> tuple[int, ...]:
        """The seats that won the game; empty while it goes on."""
        outcome = self.outcome(state)
        return () if outcome is None else outcome.winners

    def canonical(self, posted: Mapping[str, Any]) -> Event:
        """A posted action as the journal keeps it: its type and the keys its action declares.

        Presentation keys (an action's label...) are dropped; any other undeclared key is refused
        with `MalformedInput` naming it. An action type the game does not know is left for `apply`
        to refuse in the game's own words."""
        event = {key: value for key, value in posted.items() if key not in PRESENTATION_KEYS}
        declared = self.action_keys.get(str(event.get("type")))
        if declared is None:
            return event
        unknown = sorted(key for key in event if key != "type" and key not in declared)
        if unknown:
            allowed = ", ".join(sorted(declared)) or "no other key"
            raise MalformedInput(
                f"A {event['type']!r} action has no key {unknown[0]!r} (it takes: {allowed})."
            )
        return event

    # Helpers shared by the engines.

    def card_label(self, card: Card) -> str:
        """A card as players call it, never its id: its name, and which copy ("Handler #2", as the
        virtual mat labels it) when several cards share the name."""
        twins = [other.id for other in self.data.cards.values() if other.name == card.name]
        return card.name if len(twins) == 1 else f"{card.name} #{twins.index(card.id) + 1}"

    def card(self, event: Event) -> Card:
        """The card a tap event names, refused if it is not one of this game's cards."""
        card_id = event.get("card")
        if not isinstance(card_id, str):
            raise GameError("A tap needs a card id.")
        if len(card_id) > MAX_CARD_ID:  # don't echo a huge string to every scoreboard
            raise GameError("That is not a card id.", cue="unknown-card")
        card = self.data.cards.get(card_id)
        if card is None:
            game = card_id.split("/", 1)[0]
            if game != self.game and "/" in card_id:
                raise GameError(f"That card belongs to another game, not {self.data.title}.")
            raise GameError(f"Unknown card {card_id}.", cue="unknown-card")
        return card


# Cues that ask for the next input or refuse one: they tell nothing that happened, so no log has them.
UNTOLD_CUES = frozenset({"your-turn", "error", "unknown-card"})


def told(cues: list[Cue]) -> list[str]:
    """What `cues` tell the whole table, one sentence each: a game's log. Cue texts are public (every
    scoreboard shows them), so an engine whose cues never name a hidden card can log them as they are."""
    return [sentence(cue.text) for cue in cues if cue.text and cue.name not in UNTOLD_CUES]


def sentence(text: str) -> str:
    """`text` ending in a full stop (or the mark it already has)."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def with_story(view: dict[str, Any], log: list[str], outcome: Outcome | None) -> dict[str, Any]:
    """Add a public view's story: its `log`, and once the game is over its `summary`: how it ended,
    each round's result and the final scores, from what the view already shows."""
    view["log"] = list(log)
    view["summary"] = [] if outcome is None else _summary(view, outcome)
    return view


def _summary(view: dict[str, Any], outcome: Outcome) -> list[str]:
    lines = [sentence(outcome.reason)]
    lines += [sentence(f"Round {r['round']}: {r['reason']}") for r in view.get("rounds", [])]
    players = view.get("players", [])
    if view.get("rounds") and players:
        scores = ", ".join(f"{p['name']} {p['score']}" for p in players)
        lines.append(f"Final score: {scores}.")
    return lines


def seat_of(event: Event, players: int, field: str = "seat") -> int:
    """A seat number from an action, refused unless it is one of the table's seats."""
    seat = event.get(field)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
        raise GameError(f"'{field}' must be a seat number from 0 to {players - 1}.")
    return seat


def check_players(players: list[str], low: int, high: int) -> list[str]:
    """Player names, refused unless there are `low`..`high` distinct non-empty ones."""
    if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
        raise GameError("Players must be a list of names.")
    names = [p.strip() for p in players]
    if any(len(name) > MAX_NAME for name in names):
        raise GameError(f"A player's name can have at most {MAX_NAME} characters.")
    if not low <= len(names) <= high:
        count = f"{low}" if low == high else f"{low} to {high}"
        raise GameError(f"This game needs {count} players, not {len(names)}.")
    if len(set(names)) != len(names):
        raise GameError("Two players have the same name.")
    return names
