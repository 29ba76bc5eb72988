"""Seat buttons, Next and Undo: what the cards cannot say, said with a press.

The buttons are one more rendering of the prompt (`companion.games.base`): they post the same
actions the tablet's control page offers, through `Table.act` and `Table.undo`.

- **Seat button S** answers a prompt that asks for a seat: it posts the one legal action whose
  `Action.seat` (the seat it picks) is S: a target, the player who goes next... Several actions for S
  (a colour to pick, a mission tile) need the tablet: the press plays an error cue saying so. An
  action that needs a confirmation (`Action.confirm`: putting a player out) is never posted by a
  button; the tablet asks for it on purpose.
- **Next** posts the prompt's primary action (`Action.primary`): end the turn, pass, done, next
  round, draw.
- **Undo** takes back the last input, but only when held for `undo_hold` seconds (1.5 by default):
  a bump or a short press only plays an error cue that says to hold it.

A refused press has already been cued by the table (error sound, message on the scoreboard); here it
is only logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from functools import partial
from typing import Any

from companion.games.base import Action, GameError
from companion.pins.devices import PinLayout, TableInputs
from companion.table.table import Table

log = logging.getLogger(__name__)


def _name(view: Mapping[str, Any], seat: int) -> str:
    players = view.get("players") or []
    return str(players[seat].get("name")) if seat < len(players) else f"Seat {seat + 1}"


class TableButtons:
    """The buttons of `layout` (one per seat, Next and Undo), each wired to the table."""

    def __init__(self, table: Table, layout: PinLayout, pin_factory: Any = None) -> None:
        self.table = table
        self.undo_hold = layout.undo_hold
        self._held = False
        self._lock = threading.Lock()  # one press at a time: a press reads the prompt, then acts on it
        self.inputs = TableInputs(layout, pin_factory=pin_factory)
        self.seat_buttons = self.inputs.seat_buttons
        self.next_button = self.inputs.next_button
        self.undo_button = self.inputs.undo_button
        for seat, button in enumerate(self.seat_buttons):
            button.when_pressed = partial(self.press_seat, seat)
        if self.next_button is not None:
            self.next_button.when_pressed = self.press_next
        if self.undo_button is not None:
            self.undo_button.when_pressed = self._undo_down
            self.undo_button.when_held = self.hold_undo
            self.undo_button.when_released = self._undo_up

    def press_seat(self, seat: int) -> None:
        """Seat `seat`'s button: post the prompt's one action that picks this seat."""
        with self._lock:
            # One bump on a seat button must never knock a player out: no `confirm` action here.
            matches = [a for a in self.table.legal_actions() if a.seat == seat and not a.confirm]
            who = _name(self.table.view(), seat)
            if len(matches) == 1:
                self._act(matches[0])
            elif matches:
                # Several ways to answer for this seat (a colour, a tile and a target...).
                self.table.report_error(f"{who}'s button: more than one choice, choose on the tablet.")
            else:
                self.table.report_error(f"{who}'s button answers nothing now.")

    def press_next(self) -> None:
        """Next: end the turn, pass, or whatever moves the game on without a choice."""
        with self._lock:
            action = next((a for a in self.table.legal_actions() if a.primary and not a.confirm), None)
            if action is None:
                self.table.report_error("Next: nothing to pass or end now.")
            else:
                self._act(action)

    def hold_undo(self) -> None:
        """Undo held long enough: take back the last input."""
        self._held = True
        with self._lock:
            try:
                self.table.undo()
            except GameError as error:
                log.info("undo refused: %s", error)

    def _undo_down(self) -> None:
        self._held = False

    def _undo_up(self) -> None:
        if not self._held:
            # A bump or a tap: say how it works rather than take back a move by accident.
            self.table.report_error(f"Hold Undo for {self.undo_hold:g} s to take back the last input.")

    def _act(self, action: Action) -> None:
        try:
            self.table.act(action.to_event())
        except GameError as error:
            log.info("button action %s refused: %s", action.to_event(), error)

    def close(self) -> None:
        self.inputs.close()
