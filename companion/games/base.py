"""What every game engine shares.

An engine is pure: `apply(state, event) -> (state, cues)` does no I/O, reads no clock and draws no
random number. It never changes the state it is given: an illegal event raises `GameError` with a
sentence a player understands, and the caller keeps the old state. The only thing the web ever sees
is `public_view(state)`, which must leave out everything the physical game keeps hidden.

Events are plain JSON-able dicts, exactly as the journal stores them:

- a card tap: ``{"type": "tap", "card": "spy-team/red-17"}``, plus ``"seat": 2`` when the reader that
  read it belongs to seat 2 (a shared reader sends no seat: the engine takes it from its prompt);
- any other input: ``{"type": "<action>", ...}`` as each game documents in ``docs/rules/``.

The public view carries at least::

    {"game": "spy-team", "status": "playing" | "game-over", "round": 1,
     "players": [{"seat": 0, "name": "Ann", "score": 0, "eliminated": false}, ...],
     "prompt": {...}, "rounds": [{"round": 1, "winners": [1, 3], "reason": "..."}], "winners": []}

The prompt says what the table expects next; the control page, the seat LEDs and the seat buttons
are all renderings of it::

    {"text": "Ann: play a card", "seat": 0, "tap": true,
     "actions": [{"type": "pass", "label": "Pass"}, ...]}

`seat` is whom it asks (None: anyone, e.g. the host), `tap` whether a card tap is expected, and
`actions` every non-card input that is legal right now, each a ready-to-post action plus a `label`.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from companion.catalog import Card, GameData
from companion.cues import Cue

Event = dict[str, Any]
S = TypeVar("S")

MAX_CARD_ID = 64
MAX_NAME = 24  # what fits on a seat of the scoreboard


class GameError(Exception):
    """An input the rules refuse. `str(error)` is shown to the players as it is."""

    def __init__(self, message: str, cue: str = "error") -> None:
        super().__init__(message)
        self.cue = cue


class Engine(ABC, Generic[S]):
    """Base of the game engines. Subclasses implement `setup`, `_apply` (which may mutate the copy it
    is given) and `public_view`."""

    game: ClassVar[str]

    def __init__(self, data: GameData) -> None:
        self.data = data
        self.validate_data(data)

    def validate_data(self, data: GameData) -> None:
        """Check what this game needs of its data; raise `companion.catalog.DataError` if it is wrong."""

    @abstractmethod
    def setup(self, players: list[str], options: dict[str, Any]) -> S:
        """The state of a new game. Raises GameError for a wrong player count or a bad option."""

    def apply(self, state: S, event: Event) -> tuple[S, list[Cue]]:
        """Apply one event to a copy of `state`; return the new state and its cues."""
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            raise GameError("An input needs a type.")
        new_state = copy.deepcopy(state)
        cues = self._apply(new_state, event)
        return new_state, cues

    @abstractmethod
    def _apply(self, state: S, event: Event) -> list[Cue]:
        """Mutate `state` (a private copy) by `event`; raise GameError before mutating anything
        the caller could see half-done (the copy is thrown away on error anyway)."""

    @abstractmethod
    def public_view(self, state: S) -> dict[str, Any]:
        """What anyone at the table may see, prompt included."""

    # Helpers shared by the engines.

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
                raise GameError(f"{card_id} is a card of another game, not {self.data.title}.")
            raise GameError(f"Unknown card {card_id}.", cue="unknown-card")
        return card


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
