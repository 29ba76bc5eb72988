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

from companion.core.cues import Cue
from companion.games.base import Action, Engine, Event, GameError, Prompt, Status, copy_state
from companion.table.entries import Entry
from companion.table.journal import Journal, JournalError

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


def taken_back(before: dict[str, Any], after: dict[str, Any], undone: Event, title: str) -> str:
    """What an undo took back, in players' words: the log sentences the undone input had added
    (public, like the whole log; never a card id), or the start of the game it took back."""
    if undone.get("type") == "start":
        return f"Took back the start of {title}."
    old, new = before.get("log", []), after.get("log", [])
    kept = 0
    while kept < min(len(old), len(new)) and old[kept] == new[kept]:
        kept += 1
    lost = [line.rstrip(".") for line in old[kept:]]
    return f"Took back: {'; '.join(lost)}." if lost else "Took back the last input."


NOT_RECORDED = "The table could not record that input; nothing changed. Check the disk."


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
        # Called with an input's first cue right after its journal commit, before the view is made
        # or any listener hears of it: the buzzer first (Feedback.first_step, wired by the daemon).
        self.first_step: Callable[[Cue], None] | None = None
        self._lock = threading.RLock()
        # Only the current game is held: its inputs in force from its start (undone ones removed);
        # `game_start` (below) is the start's entry, from which an undo past it reads the game before.
        self._events: list[Event] = []
        self._game: str | None = None
        self._state: Any = None
        # A copy of `_state` for the next input's check (Engine.apply_to_copy), made after the input
        # before was announced: a tap's check before its journal commit is then only the rules.
        self._spare: Any = None
        self._view: dict[str, Any] = dict(IDLE_VIEW)  # the public view of (_game, _state), kept current
        current = journal.game_in_force()  # reads back to the last start in force, no further
        # The journal entry that started the game in force: its seq and time name the game for good
        # (results published to MQTT carry them, so a restart or a replay never makes a new game).
        # An undo past it reads the game before from there.
        self.game_start: Entry | None = current[0] if current else None
        self._events = [entry.event for entry in current]
        self._settle(*self._fold(self._events))
        self._make_spare()
        if self.game_start is not None:  # finished games still in the live file (a journal from
            journal.archive(before=self.game_start.seq)  # before archives, or one a crash cut short)

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

    def start(
        self, game: str, players: list[str], options: dict[str, Any] | None = None, key: str | None = None
    ) -> dict[str, Any]:
        """Start a new game (the previous one stays in the journal: undo brings it back)."""
        event = {"type": "start", "game": game, "players": players, "options": options or {}}
        return self.submit(event, key)

    def tap(
        self, card: str | None = None, uid: str | None = None, seat: int | None = None, key: str | None = None
    ) -> dict[str, Any]:
        """A card read by a reader (or the virtual mat): by card id, or by tag UID via the registry.

        `key` (on every input call) is the request's idempotency key: a repeat of an input journaled
        with it gets that input's answer again and changes nothing."""
        if card is None and uid is not None:
            card = self.resolve_uid(uid)
            if card is None:
                self._refuse(GameError(f"Unknown tag {uid}: enroll it first.", cue="unknown-card"), uid=uid)
        if not isinstance(card, str) or not card:
            self._refuse(GameError("A tap needs a card id or a tag UID."))
        event: Event = {"type": "tap", "card": card}
        if seat is not None:
            event["seat"] = seat
        return self.submit(event, key)

    def act(self, action: dict[str, Any], key: str | None = None) -> dict[str, Any]:
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
            return self.submit(action, key)

    def undo(self, key: str | None = None) -> dict[str, Any]:
        """Take back the last input in force; past a game's start, the game before comes back. The
        answer is the new public view with `taken_back`: what was taken back, in players' words."""
        event: Event = {"type": "undo"}
        with self._lock:
            replay = self._replay(key, event)
            if replay is not None:
                return replay
            if not self._events:
                self._refuse(GameError("Nothing to undo."))
            remaining, start = self._events[:-1], self.game_start
            if not remaining and start is not None:  # the start itself: read the game before it
                try:
                    before = self.journal.game_in_force(before=start.seq)
                except JournalError as error:
                    log.error("%s", error)
                    self._refuse(GameError("The game before this one cannot be read from the journal."))
                remaining, start = [entry.event for entry in before], before[0] if before else None
            game, state = self._fold(remaining)
            view = self._view_of(game, state)
            taken = taken_back(self._view, view, self._events[-1], self._title(self._game))
            answer = {**view, "taken_back": taken}  # the control page says what the undo took back
            self._write(event, key, answer)
            self._events, self.game_start = remaining, start
            self._settle(game, state, view)
            self._emit([Cue("undo", text=taken)], view)
            self._make_spare()
            return answer

    def submit(self, event: Event, key: str | None = None) -> dict[str, Any]:
        """Check, journal, apply and announce one input; raise GameError (after an error cue) if refused."""
        with self._lock:
            replay = self._replay(key, event)
            if replay is not None:
                return replay
            spare, self._spare = self._spare, None  # this check uses it up, whatever it finds
            try:
                game, state, cues = self._next(event, self._game, self._state, spare)
            except GameError as error:
                self._refuse(error)
            # A keyed input journals its answer with it; any other (a reader's tap) gets its view
            # made after the commit and the buzzer's first step, as all that follows.
            view = self._view_of(game, state) if key is not None else None
            entry = self._write(event, key, view)
            self._first_step(cues)
            asked_before = self._asking()  # of the game before this input: it is settled below
            view = self._view_of(game, state) if view is None else view
            if event.get("type") == "start":  # a new game: the one before is read back only on undo
                self._events, self.game_start = [event], entry
            else:
                self._events.append(event)
            self._settle(game, state, view)
            cues = [*cues, *self._your_turn(asked_before, event, cues)]
            self._emit(cues, view)
            if event.get("type") == "start":
                self.journal.archive(before=entry.seq)  # after the cues: the games before go to the archive
            self._make_spare()
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

    def _next(
        self, event: Event, current: str | None, state: Any, spare: Any = None
    ) -> tuple[str, Any, list[Cue]]:
        """What `event` would make of the game `current` in `state`, without changing the table;
        checked on `spare`, a copy of `state` made ahead, if there is one."""
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
        if current is None:
            raise GameError("No game is running: start one from the control page.")
        engine = self.engines[current]
        state, cues = engine.apply(state, event) if spare is None else engine.apply_to_copy(spare, event)
        return current, state, cues

    def _replay(self, key: str | None, event: Event) -> dict[str, Any] | None:
        """The answer already given to the input journaled with `key`, if there is one."""
        if key is None:
            return None
        try:
            prior = self.journal.keyed(key)
        except JournalError as error:
            log.error("%s", error)
            self._refuse(GameError(NOT_RECORDED))
        if prior is None:
            return None
        if prior.event != event:
            self._refuse(GameError(f"The Idempotency-Key {key!r} was already used for another input."))
        if prior.answer is None:  # archived with a finished game: the input is there, its answer not
            self._refuse(GameError(f"That input was already recorded (entry {prior.seq}); nothing changed."))
        return prior.answer

    def _first_step(self, cues: list[Cue]) -> None:
        if cues and self.first_step is not None:
            try:
                self.first_step(cues[0])
            except Exception:  # the input is journaled: a pin that fails must not refuse it
                log.exception("the first step of a cue failed")

    def _write(self, event: Event, key: str | None, view: dict[str, Any] | None) -> Entry:
        at = self.clock()
        try:
            seq = self.journal.append(event, at, key=key, answer=view if key is not None else None)
            return Entry(seq, at, event, key)
        except JournalError as error:
            log.error("%s", error)
            self._refuse(GameError(NOT_RECORDED))

    def _fold(self, events: list[Event]) -> tuple[str | None, Any]:
        """The game that the inputs in force, from a start, make (at start-up and after an undo)."""
        game: str | None = None
        state: Any = None
        for event in events:
            try:
                game, state, _ = self._next(event, game, state)
            except GameError as error:
                raise JournalError(
                    f"the journal holds an input the rules refuse ({event}): {error}"
                ) from error
        return game, state

    def _title(self, game: str | None) -> str:
        return "the game" if game is None else self.engines[game].title

    def _view_of(self, game: str | None, state: Any) -> dict[str, Any]:
        return dict(IDLE_VIEW) if game is None else self.engines[game].public_view(state)

    def _settle(self, game: str | None, state: Any, view: dict[str, Any] | None = None) -> dict[str, Any]:
        """Make (game, state) the table's current game, with its public view computed once."""
        self._game, self._state, self._spare = game, state, None
        self._view = self._view_of(game, state) if view is None else view
        return self._view

    def _make_spare(self) -> None:
        """The next input's copy of the state, made once this one has been announced."""
        self._spare = None if self._game is None else copy_state(self._state)

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
