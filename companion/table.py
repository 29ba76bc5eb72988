"""The table: the one place where every input (card taps, seat buttons, the tablet) arrives.

An input is checked by the game engine, written to the journal, and only then shown: the new state
and its cues go to every listener (feedback on the pins, the scoreboard's event stream). A refused
input changes nothing, is not journaled, and plays an error cue.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NoReturn

from companion.cues import Cue
from companion.games.base import Action, Engine, Event, GameError, Prompt, Status
from companion.journal import Entry, Journal, JournalError, effective_entries

log = logging.getLogger(__name__)

Listener = Callable[[str, dict[str, Any] | Cue], None]
"""Called with ("state", public view) after every change and ("cue", the `Cue`) for every cue."""

IDLE_PROMPT = Prompt("Start a game from the control page.")
IDLE_VIEW: dict[str, Any] = {
    "game": None,
    "status": Status.IDLE.value,
    "round": 0,
    "players": [],
    "prompt": IDLE_PROMPT.to_json(),
    "rounds": [],
    "winners": [],
}


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Table:
    """Holds the current game, folded from the journal, and applies inputs to it one at a time."""

    def __init__(
        self,
        journal: Journal,
        engines: dict[str, Engine[Any]],
        resolve_uid: Callable[[str], str | None] = lambda uid: None,
        clock: Callable[[], str] = utc_now,
    ) -> None:
        self.journal = journal
        self.engines = engines
        self.resolve_uid = resolve_uid
        self.clock = clock
        self.listeners: list[Listener] = []
        self._lock = threading.RLock()
        self._events: list[Event] = []  # inputs in force, oldest first (undone ones removed)
        self._game: str | None = None
        self._state: Any = None
        self._view: dict[str, Any] = dict(IDLE_VIEW)  # the public view of (_game, _state), kept current
        in_force = effective_entries(journal.entries())
        # The journal entry that started the game in force: its seq and time name the game for good
        # (results published to MQTT carry them, so a restart or a replay never makes a new game).
        self.game_start: Entry | None = _last_start(in_force)
        self._refold([entry.event for entry in in_force])

    # Reading

    @property
    def game(self) -> str | None:
        return self._game

    def view(self) -> dict[str, Any]:
        """The public view of the table, or the idle view when no game has started. Computed once per
        change (`_settle`), so reading it costs nothing; callers must not change it."""
        with self._lock:
            return self._view

    def prompt(self) -> Prompt:
        """What the current game expects next, typed (the idle prompt when no game runs)."""
        with self._lock:
            return IDLE_PROMPT if self._game is None else self.engines[self._game].prompt(self._state)

    def legal_actions(self) -> tuple[Action, ...]:
        """Every non-card input the current game accepts now."""
        return self.prompt().actions

    def current_seat(self) -> int | None:
        """The seat the current game waits on, None when it waits on nobody in particular."""
        with self._lock:
            return None if self._game is None else self.engines[self._game].current_seat(self._state)

    # Inputs

    def start(self, game: str, players: list[str], options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Start a new game (the previous one stays in the journal: undo brings it back)."""
        return self.submit({"type": "start", "game": game, "players": players, "options": options or {}})

    def tap(self, card: str | None = None, uid: str | None = None, seat: int | None = None) -> dict[str, Any]:
        """A card read by a reader (or the virtual mat): by card id, or by tag UID via the registry."""
        if card is None and uid is not None:
            card = self.resolve_uid(uid)
            if card is None:
                self._refuse(GameError(f"Unknown tag {uid}: enroll it first.", cue="unknown-card"), uid=uid)
        if not isinstance(card, str) or not card:
            self._refuse(GameError("A tap needs a card id or a tag UID."))
        event: Event = {"type": "tap", "card": card}
        if seat is not None:
            event["seat"] = seat
        return self.submit(event)

    def act(self, action: dict[str, Any]) -> dict[str, Any]:
        """A non-card input (a choice, a pass...). Card taps and starts have their own calls."""
        if not isinstance(action, dict) or not isinstance(action.get("type"), str):
            self._refuse(GameError("An action needs a 'type'."))
        if action["type"] in ("tap", "start", "undo"):
            self._refuse(GameError(f"'{action['type']}' is not an action: use its own call."))
        with self._lock:
            if self._game is not None:
                # Only the keys the action declares are journaled (a label is dropped, a stray key
                # refused): the journal keeps inputs, not whatever a client sent along.
                try:
                    action = self.engines[self._game].canonical(action)
                except GameError as error:
                    self._refuse(error)
            return self.submit(action)

    def undo(self) -> dict[str, Any]:
        """Take back the last input in force."""
        with self._lock:
            if not self._events:
                self._refuse(GameError("Nothing to undo."))
            remaining, undone = self._events[:-1], self._events[-1]
            self._write({"type": "undo"})
            if undone.get("type") == "start":  # the game before comes back (rare: read the journal)
                self.game_start = _last_start(effective_entries(self.journal.entries()))
            self._refold(remaining)
            view = self.view()
            self._emit([Cue("undo", text="Took back the last input.")], view)
            return view

    def submit(self, event: Event) -> dict[str, Any]:
        """Check, journal, apply and announce one input; raise GameError (after an error cue) if refused."""
        with self._lock:
            try:
                game, state, cues = self._next(event)
            except GameError as error:
                self._refuse(error)
            asked_before = self._asking()
            entry = self._write(event)
            if event.get("type") == "start":
                self.game_start = entry
            self._events.append(event)
            view = self._settle(game, state)
            cues = [*cues, *self._your_turn(asked_before, event, cues)]
            self._emit(cues, view)
            return view

    def _asking(self) -> tuple[int | None, int]:
        """(the seat the game waits on, the number of turns begun): "your turn" when it changes."""
        with self._lock:
            if self._game is None:
                return None, 0
            engine = self.engines[self._game]
            return engine.current_seat(self._state), engine.turn_number(self._state)

    def _your_turn(self, asked_before: tuple[int | None, int], event: Event, cues: list[Cue]) -> list[Cue]:
        """The one place that decides "your turn", for every game: whenever the prompt turns to another
        seat, a new turn begins (an extra turn of the same seat too), or a game starts. An engine may
        play it itself with a better text; then the table leaves it at that."""
        prompt = self.prompt()
        asked = prompt.seat
        if asked is None or any(cue.name == "your-turn" for cue in cues):
            return []
        if self._asking() == asked_before and event.get("type") != "start":
            return []
        name = self._view["players"][asked]["name"]
        # A prompt that asks a seat names its player; say the name first if it does not.
        text = prompt.text if prompt.text.startswith(name) else f"{name}: {prompt.text}"
        return [Cue("your-turn", seat=asked, text=text)]

    def announce(self, cue: Cue) -> None:
        """Play a cue that is not about an input (a reader lost or back, a shutdown)."""
        with self._lock:
            self._emit([cue], None)

    def report_error(self, message: str) -> None:
        """An input refused before it reached the table (a malformed request): error cue only."""
        with self._lock:
            self._emit([Cue("error", text=message)], None)

    # Internals

    def _next(self, event: Event) -> tuple[str, Any, list[Cue]]:
        """What `event` would make of the table, without changing it."""
        if event.get("type") == "start":
            game = event.get("game")
            if not isinstance(game, str) or game not in self.engines:
                known = ", ".join(sorted(self.engines))
                raise GameError(f"Unknown game {game!r}: choose one of {known}.")
            engine = self.engines[game]
            options = event.get("options") or {}
            if not isinstance(options, dict):
                raise GameError("Options must be an object.")
            state = engine.setup(event.get("players"), options)  # type: ignore[arg-type]
            return game, state, [Cue("game-started", text=f"{engine.data.title} begins.")]
        if self._game is None:
            raise GameError("No game is running: start one from the control page.")
        engine = self.engines[self._game]
        state, cues = engine.apply(self._state, event)
        return self._game, state, cues

    def _write(self, event: Event) -> Entry:
        at = self.clock()
        try:
            return Entry(self.journal.append(event, at), at, event)
        except JournalError as error:
            log.error("%s", error)
            message = "The table could not record that input; nothing changed. Check the disk."
            self._refuse(GameError(message))

    def _refold(self, events: list[Event]) -> None:
        """Rebuild the current game from the inputs in force (at start-up and after an undo)."""
        self._game, self._state = None, None
        # Only the current game matters: fold from the last start in force, not from the first game
        # this table ever saw, so start-up and undo stay quick however long the journal grows.
        starts = [i for i, event in enumerate(events) if event.get("type") == "start"]
        for event in events[starts[-1] if starts else 0 :]:
            try:
                self._game, self._state, _ = self._next(event)
            except GameError as error:
                raise JournalError(
                    f"the journal holds an input the rules refuse ({event}): {error}"
                ) from error
        self._events = list(events)
        self._settle(self._game, self._state)

    def _settle(self, game: str | None, state: Any) -> dict[str, Any]:
        """Make (game, state) the table's current game and compute its public view once."""
        self._game, self._state = game, state
        self._view = dict(IDLE_VIEW) if game is None else self.engines[game].public_view(state)
        return self._view

    def _refuse(self, error: GameError, **data: Any) -> NoReturn:
        self._emit([Cue(error.cue, text=str(error), data=data)], None)
        raise error

    def _emit(self, cues: list[Cue], view: dict[str, Any] | None) -> None:
        messages: list[tuple[str, dict[str, Any] | Cue]] = []
        if view is not None:
            messages.append(("state", view))
        messages.extend(("cue", cue) for cue in cues)
        # Listener by listener, in order: the feedback layer (pins) hears every message of an input
        # before the broker wakes the scoreboards' threads.
        for listener in list(self.listeners):
            for kind, payload in messages:
                try:
                    listener(kind, payload)
                except Exception:  # one broken output must not stop the table or the others
                    log.exception("a %s listener failed", kind)


def _last_start(entries: list[Entry]) -> Entry | None:
    return next((entry for entry in reversed(entries) if entry.event.get("type") == "start"), None)
