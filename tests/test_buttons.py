"""Seat buttons, Next and Undo on gpiozero's mock pins, driving real games through a real table."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from gpiozero import Button
from gpiozero.pins.mock import MockFactory, MockPin

from companion.buttons import TableButtons, seat_of_action
from companion.catalog import load_catalog
from companion.games import build_engines
from companion.journal import Journal, effective_events
from companion.pins import DEFAULT_PINS, PinLayout
from companion.table import Table

CATALOG = load_catalog()
SEAT_PINS = DEFAULT_PINS["seat_buttons"]
HOLD = 0.2  # a short Undo hold keeps the suite fast; the default (1.5 s) has its own test


@dataclass
class Rig:
    table: Table
    factory: MockFactory
    buttons: TableButtons
    cues: list[dict[str, Any]] = field(default_factory=list)

    def press(self, pin: int, hold: float = 0.0) -> None:
        self.factory.pin(pin).drive_low()  # buttons pull up: pressed = low
        if hold:
            time.sleep(hold)
        self.factory.pin(pin).drive_high()

    def seat(self, seat: int) -> None:
        self.press(SEAT_PINS[seat])

    def next(self) -> None:
        self.press(DEFAULT_PINS["next_button"])

    def events(self) -> list[dict[str, Any]]:
        """The inputs in force, as the journal holds them."""
        return effective_events(entry.event for entry in self.table.journal.entries())

    def last_cue(self) -> dict[str, Any]:
        return self.cues[-1]


@pytest.fixture
def rig() -> Iterator[Rig]:
    engines = build_engines(CATALOG)
    try:
        from companion.games.peanuts import Peanuts
    except ImportError:  # not written yet: the Peanuts tests skip
        pass
    else:
        engines.setdefault("peanuts", Peanuts(CATALOG["peanuts"]))
    table = Table(Journal(":memory:"), engines)
    factory = MockFactory(pin_class=MockPin)
    buttons = TableButtons(table, PinLayout.parse({"undo_hold": HOLD}), pin_factory=factory)
    made = Rig(table, factory, buttons)
    table.listeners.append(lambda kind, cue: made.cues.append(cue.to_json()) if kind == "cue" else None)
    yield made
    buttons.close()


def peanuts_target_prompt(rig: Rig) -> dict[str, Any]:
    """Mission for Peanuts, 3 players: Ann plays the Agent for its ASSIST and must pick a player."""
    if "peanuts" not in rig.table.engines:
        pytest.skip("the Peanuts engine is not there yet")
    rig.table.start("peanuts", ["Ann", "Bob", "Cy"], {})
    for card in ("peanuts/seer-1", "peanuts/informant-1", "peanuts/handler-1"):
        rig.table.tap(card=card)
    rig.table.act({"type": "draw"})
    rig.table.tap(card="peanuts/agent-1")
    view = rig.table.act({"type": "assist"})
    assert view["prompt"]["seat"] == 0 and {a["seat"] for a in view["prompt"]["actions"]} == {1, 2}
    return view


# Seat buttons


def test_a_seat_button_answers_a_prompt_that_asks_for_that_seat(rig: Rig) -> None:
    peanuts_target_prompt(rig)
    rig.seat(2)
    assert rig.events()[-1] == {"type": "target", "seat": 2}  # posted as the tablet would, no label
    assert rig.table.view()["prompt"].get("step") != "target"


def test_a_seat_the_prompt_does_not_offer_changes_nothing(rig: Rig) -> None:
    peanuts_target_prompt(rig)
    before = rig.events()
    rig.seat(0)  # Ann picks; she is not one of the choices
    rig.seat(4)  # no such player
    assert rig.events() == before
    assert rig.last_cue()["cue"] == "error" and "answers nothing" in rig.last_cue()["text"]


def test_several_choices_for_one_seat_need_the_tablet(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})  # setup: Ann claims a colour, four to choose from
    rig.seat(0)
    assert rig.events() == [{"type": "start", "game": "spy", "players": ["Ann", "Bob", "Cy"], "options": {}}]
    assert rig.last_cue()["cue"] == "error" and "choose on the tablet" in rig.last_cue()["text"]


def test_spy_team_missions_are_chosen_on_the_tablet(rig: Rig) -> None:
    rig.table.start("spy-team", ["Ann", "Bob", "Cy", "Di"], {"start": 0})
    rig.seat(0)
    assert [event["type"] for event in rig.events()] == ["start"]
    assert "choose on the tablet" in rig.last_cue()["text"]


def test_a_seat_button_never_eliminates_a_player(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})
    for colour in ("green", "red", "blue"):
        rig.table.tap(card=f"spy/{colour}-spy")
    actions = rig.table.view()["prompt"]["actions"]
    assert {"type": "eliminate", "seat": 1} in [{k: v for k, v in a.items() if k != "label"} for a in actions]
    rig.seat(1)
    assert rig.table.view()["players"][1]["eliminated"] is False
    assert rig.events()[-1]["type"] == "tap"


# Next


def test_next_passes_the_turn(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})
    for colour in ("green", "red", "blue"):
        rig.table.tap(card=f"spy/{colour}-spy")
    assert rig.table.view()["prompt"]["seat"] == 0
    rig.next()
    assert rig.events()[-1] == {"type": "pass"}
    assert rig.table.view()["prompt"]["seat"] == 1


def test_next_draws_when_the_turn_begins_with_a_draw(rig: Rig) -> None:
    if "peanuts" not in rig.table.engines:
        pytest.skip("the Peanuts engine is not there yet")
    rig.table.start("peanuts", ["Ann", "Bob", "Cy"], {})
    for card in ("peanuts/seer-1", "peanuts/informant-1", "peanuts/handler-1"):
        rig.table.tap(card=card)
    rig.next()
    assert rig.events()[-1] == {"type": "draw"}


def test_next_with_nothing_to_pass_only_plays_an_error(rig: Rig) -> None:
    rig.next()  # idle table
    rig.table.start("spy-team", ["Ann", "Bob", "Cy", "Di"], {})
    rig.next()  # missions to choose: nothing to pass
    assert [event["type"] for event in rig.events()] == ["start"]
    assert [cue["cue"] for cue in rig.cues].count("error") == 2


# Undo


def test_a_long_press_on_undo_takes_back_the_last_input(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})
    rig.table.tap(card="spy/green-spy")
    rig.press(DEFAULT_PINS["undo_button"], hold=HOLD + 0.15)
    assert [event["type"] for event in rig.events()] == ["start"]
    assert rig.last_cue()["cue"] == "undo"


def test_a_short_press_on_undo_takes_back_nothing_and_says_to_hold_it(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})
    rig.table.tap(card="spy/green-spy")
    rig.press(DEFAULT_PINS["undo_button"], hold=HOLD / 4)
    time.sleep(HOLD)  # the hold timer must not fire after the release either
    assert [event["type"] for event in rig.events()] == ["start", "tap"]
    assert rig.last_cue()["cue"] == "error" and "Hold Undo" in rig.last_cue()["text"]


def test_undo_is_held_one_and_a_half_seconds_by_default() -> None:
    table = Table(Journal(":memory:"), build_engines(CATALOG))
    factory = MockFactory(pin_class=MockPin)
    buttons = TableButtons(table, PinLayout.parse(None), pin_factory=factory)
    try:
        table.start("spy", ["Ann", "Bob"], {})
        assert buttons.undo_button is not None and buttons.undo_button.hold_time == 1.5
        pin = factory.pin(DEFAULT_PINS["undo_button"])
        pin.drive_low()
        time.sleep(0.4)  # a firm bump, far short of the hold
        pin.drive_high()
        assert table.game == "spy"
    finally:
        buttons.close()


def test_undo_with_nothing_to_undo_is_caught(rig: Rig) -> None:
    rig.press(DEFAULT_PINS["undo_button"], hold=HOLD + 0.15)  # raises GameError inside: logged, cued
    assert rig.last_cue()["cue"] == "error" and "Nothing to undo" in rig.last_cue()["text"]


# Which seat an action picks


@pytest.mark.parametrize(
    ("action", "prompt_seat", "seat"),
    [
        ({"type": "target", "seat": 2}, 0, 2),  # the seat is the choice
        ({"type": "pick", "target": 1}, None, 1),
        ({"type": "swap", "seat": 0, "target": 3}, 0, 3),  # the actor's own seat is not the choice
        ({"type": "mission", "seat": 0, "tile": "1/5", "target": 1}, None, None),  # two seats: no
        ({"type": "trade", "seats": [0, 2]}, 0, None),  # a pair: the tablet
        ({"type": "pass"}, 0, None),
        ({"type": "x", "seat": True}, None, None),  # a flag, not a seat
        ({"type": "x", "seat": 9}, None, None),  # no such seat
        ({"type": "take-back", "seat": 1, "index": 0}, 0, 1),
    ],
)
def test_the_seat_an_action_picks(action: dict[str, Any], prompt_seat: int | None, seat: int | None) -> None:
    assert seat_of_action(action, {"seat": prompt_seat}, players=4) == seat


def test_buttons_left_out_of_the_config_are_not_made() -> None:
    table = Table(Journal(":memory:"), build_engines(CATALOG))
    factory = MockFactory(pin_class=MockPin)
    layout = PinLayout.parse({"seat_buttons": [17, 27], "next_button": False})
    buttons = TableButtons(table, layout, pin_factory=factory)
    try:
        assert len(buttons.seat_buttons) == 2 and buttons.next_button is None
        Button(25, pin_factory=factory).close()  # GPIO 25 stayed free
    finally:
        buttons.close()
