"""Seat buttons, Next and Undo: what the cards cannot say, said with a press or a hold.

The buttons are one more rendering of the prompt (`companion.games.base`): they post the same
actions the tablet's control page offers, through `Table.act` and `Table.undo`.

- **Seat button S, pressed** (let go before `undo_hold` seconds): posts the one legal action whose
  `Action.seat` is S and that a press gives (not `hold`, not `confirm`, `button`): a target, the
  player who goes next, the next choice of a list (a colour, a mission). Several such actions for S
  play an error cue saying to choose on the tablet; none, one saying the button answers nothing now.
- **Seat button S, held** for `undo_hold` seconds (the same time as Undo): posts the one legal
  action for S that a hold gives (`Action.hold`): putting that player out, settling the choice the
  presses showed. The hold is the confirmation a bump cannot give, so a `confirm` action is only ever
  posted by a hold. Where nothing is held for, a hold is the press (a slow press is still a press).
- **Next** posts the prompt's primary action (`Action.primary`): end the turn, pass, done, next
  round, draw. It acts when it is let go.
- **Undo** takes back the last input, but only when held for `undo_hold` seconds (1.5 by default):
  a bump or a short press only plays an error cue that says to hold it.
- **Next and Undo together**, held for `power_off_hold` seconds (5; 0: never), shut the Pi down:
  the `power_off` callback (the daemon: a cue, the journal closed, then the command). From the
  moment both are down neither acts alone, on release or by Undo's hold; an Undo hold given
  before Next went down stands. Let go too early, the table only says how the gesture works.

A seat button acts when it is let go (or when the hold is reached), so a press and a hold are never
both given by one push. `press("seat-2", hold=False)` is the virtual button of the demo and the
tests: it drives the mock pins, so it runs exactly the code a GPIO press runs. It pushes one button
at a time, so it can never give the power-off gesture.

A refused press has already been cued by the table (error sound, message on the scoreboard); here it
is only logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from gpiozero import Button
from gpiozero.pins.mock import MockPin

from companion.games.base import Action, GameError
from companion.pins.devices import PinLayout, TableInputs
from companion.table.table import Table

log = logging.getLogger(__name__)


class NotVirtual(Exception):
    """The buttons are real GPIO buttons: nobody may press them from afar."""


def _name(view: Mapping[str, Any], seat: int) -> str:
    players = view.get("players") or []
    return str(players[seat].get("name")) if seat < len(players) else f"Seat {seat + 1}"


def seat_choices(actions: Iterable[Action], seat: int, hold: bool) -> list[Action]:
    """The actions seat button `seat` may post, pressed (`hold` False) or held: a press never gives a
    `hold` or a `confirm` action; a hold gives the `hold` ones, and where there are none it is the
    press. One choice is posted; several are refused (choose on the tablet)."""
    mine = [a for a in actions if a.seat == seat and a.button]
    held = [a for a in mine if a.hold]
    if hold and held:
        return held
    return [a for a in mine if not a.hold and not a.confirm]


def next_choice(actions: Iterable[Action]) -> Action | None:
    """The action Next posts: the prompt's primary one (never a `confirm` or `hold` one)."""
    return next((a for a in actions if a.primary and a.button and not a.confirm and not a.hold), None)


class TableButtons:
    """The buttons of `layout` (one per seat, Next and Undo), each wired to the table."""

    def __init__(
        self,
        table: Table,
        layout: PinLayout,
        pin_factory: Any = None,
        power_off: Callable[[], None] | None = None,
    ) -> None:
        self.table = table
        self.undo_hold = layout.undo_hold
        self.power_off_hold = layout.power_off_hold
        self.power_off = power_off if layout.power_off_hold > 0 else None
        self._chord = False  # Next and Undo are both down (or were, until both are up again)
        self._chord_timer: threading.Timer | None = None
        self._chord_lock = threading.Lock()  # the two buttons report from different threads
        self._held: dict[str, bool] = {}  # button name -> held since it went down
        self._lock = threading.Lock()  # one press at a time: a press reads the prompt, then acts on it
        self._virtual = threading.Lock()  # one virtual push at a time
        self._hold_done = threading.Event()  # a hold's handler has finished (for a virtual hold)
        self._refusal: str | None = None  # what the last press was told, when it was refused
        self.inputs = TableInputs(layout, pin_factory=pin_factory)
        self.seat_buttons = self.inputs.seat_buttons
        self.next_button = self.inputs.next_button
        self.undo_button = self.inputs.undo_button
        for seat, button in enumerate(self.seat_buttons):
            button.when_pressed = partial(self._down, f"seat-{seat}")
            button.when_held = partial(self._seat_held, seat)
            button.when_released = partial(self._seat_up, seat)
        if self.next_button is not None:
            self.next_button.when_pressed = partial(self._down, "next")
            self.next_button.when_released = self._next_up
        if self.undo_button is not None:
            self.undo_button.when_pressed = partial(self._down, "undo")
            self.undo_button.when_held = self._undo_held
            self.undo_button.when_released = self._undo_up

    # ------------------------------------------------------------------ what each button means

    def press_seat(self, seat: int) -> None:
        """Seat `seat`'s button pressed: post the prompt's one action a press of this seat gives."""
        self._seat(seat, hold=False)

    def hold_seat(self, seat: int) -> None:
        """Seat `seat`'s button held: post the one action a hold gives, else what a press gives."""
        self._seat(seat, hold=True)

    def _seat(self, seat: int, hold: bool) -> None:
        with self._lock:
            # One bump on a seat button must never knock a player out: `confirm` only by a hold.
            matches = seat_choices(self.table.legal_actions(), seat, hold)
            who = _name(self.table.view(), seat)
            if len(matches) == 1:
                self._act(matches[0])
            elif matches:
                # Several ways to answer for this seat that the engine gives no order to.
                self._refuse(f"{who}'s button: more than one choice, choose on the tablet.")
            else:
                self._refuse(f"{who}'s button answers nothing now.")

    def press_next(self) -> None:
        """Next: end the turn, pass, or whatever moves the game on without a choice."""
        with self._lock:
            action = next_choice(self.table.legal_actions())
            if action is None:
                self._refuse("Next: nothing to pass or end now.")
            else:
                self._act(action)

    def hold_undo(self) -> None:
        """Undo held long enough: take back the last input."""
        self._held["undo"] = True
        try:
            with self._lock:
                try:
                    self.table.undo()
                except GameError as error:
                    self._refusal = str(error)
                    log.info("undo refused: %s", error)
        finally:
            self._hold_done.set()

    # ------------------------------------------------------------------ the virtual buttons

    def names(self) -> list[str]:
        """The buttons this table has: ``seat-0`` ... (seats as the API numbers them), next, undo."""
        names = [f"seat-{seat}" for seat in range(len(self.seat_buttons))]
        return names + [name for name, b in (("next", self.next_button), ("undo", self.undo_button)) if b]

    @property
    def virtual(self) -> bool:
        """Whether every button is on mock pins, so `press` may push them."""
        return all(isinstance(button.pin, MockPin) for button in self.inputs)

    def press(self, name: str, hold: bool = False) -> str | None:
        """Push the button `name` (see `names`) as a hand would: down, then up at once or, with
        `hold`, once the hold has been acted on. Returns when the button's input is applied: None,
        or what the table said when it refused it (it played the error cue already).
        KeyError: no such button; NotVirtual: the pins are real."""
        button = self._button(name)
        if not isinstance(button.pin, MockPin):
            raise NotVirtual("These are real buttons: press them on the table.")
        with self._virtual:
            self._hold_done.clear()
            self._refusal = None
            button.pin.drive_low()  # buttons pull up: pressed = low
            try:
                # Next has no hold: held, it is the press (given when it is let go).
                if hold and button.when_held is not None and not self._hold_done.wait(button.hold_time + 5):
                    log.warning("virtual hold of %s: the hold never fired", name)
            finally:
                button.pin.drive_high()
            return self._refusal

    def _button(self, name: str) -> Button:
        found = {"next": self.next_button, "undo": self.undo_button}.get(name)
        if name.startswith("seat-") and name[5:].isdigit() and int(name[5:]) < len(self.seat_buttons):
            found = self.seat_buttons[int(name[5:])]
        if found is None:
            raise KeyError(name)
        return found

    # ------------------------------------------------------------------ pins

    def _down(self, name: str) -> None:
        self._held[name] = False
        if name in ("next", "undo"):
            self._chord_down()

    def _chord_down(self) -> None:
        """Next or Undo went down: with the other one down too, the power-off hold begins."""
        if self.power_off is None or self.next_button is None or self.undo_button is None:
            return
        with self._chord_lock:
            if self._chord or not (self.next_button.is_pressed and self.undo_button.is_pressed):
                return
            self._chord = True
            self._chord_timer = threading.Timer(self.power_off_hold, self._chord_held)
            self._chord_timer.daemon = True
            self._chord_timer.start()

    def _chord_held(self) -> None:
        with self._chord_lock:
            buttons = (self.next_button, self.undo_button)
            both = all(button is not None and button.is_pressed for button in buttons)
            fire = self._chord and both and self._chord_timer is not None
            self._chord_timer = None
        if fire and self.power_off is not None:
            log.warning("Next and Undo held for %g s: power-off", self.power_off_hold)
            self.power_off()

    def _chord_up(self) -> bool:
        """Next or Undo let go: whether it was part of the power-off gesture (then it does nothing
        alone). Let go before the hold was reached, the table says how the gesture works, once."""
        with self._chord_lock:
            if not self._chord:
                return False
            early = self._chord_timer is not None
            if early and self._chord_timer is not None:
                self._chord_timer.cancel()
            self._chord_timer = None
            others = [b for b in (self.next_button, self.undo_button) if b is not None and b.is_pressed]
            self._chord = bool(others)  # over once both are up
        if early:
            hold = f"{self.power_off_hold:g}"
            self._refuse(f"Hold Next and Undo together for {hold} s to power off; let go, nothing done.")
        return True

    def _next_up(self) -> None:
        if not self._chord_up():
            self.press_next()

    def _undo_held(self) -> None:
        if self._chord:  # part of the power-off gesture: Undo alone takes back nothing
            self._held["undo"] = True
            self._hold_done.set()
            return
        self.hold_undo()

    def _seat_held(self, seat: int) -> None:
        self._held[f"seat-{seat}"] = True
        try:
            self.hold_seat(seat)
        finally:
            self._hold_done.set()

    def _seat_up(self, seat: int) -> None:
        if not self._held.get(f"seat-{seat}", False):
            self.press_seat(seat)

    def _undo_up(self) -> None:
        if self._chord_up():
            return
        if not self._held.get("undo", False):
            # A bump or a tap: say how it works rather than take back a move by accident.
            self._refuse(f"Hold Undo for {self.undo_hold:g} s to take back the last input.")

    def _refuse(self, message: str) -> None:
        self._refusal = message
        self.table.report_error(message)

    def _act(self, action: Action) -> None:
        try:
            self.table.act(action.to_event())
        except GameError as error:
            self._refusal = str(error)
            log.info("button action %s refused: %s", action.to_event(), error)

    def close(self) -> None:
        with self._chord_lock:
            if self._chord_timer is not None:
                self._chord_timer.cancel()
            self._chord_timer = None
        self.inputs.close()
