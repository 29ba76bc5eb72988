"""Seat buttons, Next and Undo on gpiozero's mock pins, driving real games through a real table."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from gpiozero import Button
from gpiozero.pins.mock import MockFactory, MockPin

from companion.core.cues import Cue
from companion.games import build_engines
from companion.games.base import Action, Engine, Event, Outcome, Prompt, Status
from companion.games.catalog import GameData, load_catalog
from companion.pins.buttons import TableButtons
from companion.pins.devices import DEFAULT_PINS, PinLayout
from companion.table.entries import effective_events
from companion.table.journal import Journal
from companion.table.table import Table
from tests.waiting import wait_for

CATALOG = load_catalog()
SEAT_PINS = DEFAULT_PINS["seat_buttons"]
HOLD = 0.2  # a short Undo hold keeps the suite fast; the default (1.5 s) has its own test


@dataclass
class Rig:
    table: Table
    factory: MockFactory
    buttons: TableButtons
    cues: list[dict[str, Any]] = field(default_factory=list)

    def press(self, pin: int) -> None:
        """A press let go at once: never long enough for a hold, however busy the machine."""
        self.factory.pin(pin).drive_low()  # buttons pull up: pressed = low
        self.factory.pin(pin).drive_high()

    def hold(self, pin: int, until: Callable[[], Any]) -> None:
        """Push `pin` and keep it down until `until()` (the hold acted on it), then let go."""
        self.factory.pin(pin).drive_low()
        try:
            wait_for(until)
        finally:
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


def test_a_press_in_spy_setup_shows_the_next_colour_and_a_hold_claims_it(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})  # setup: Ann claims a colour, four to choose from
    assert "hold your seat button to play green" in rig.table.view()["prompt"]["text"]
    assert rig.buttons.press("seat-0") is None  # a press only shows the next colour
    assert rig.events()[-1] == {"type": "pick", "seat": 0}
    assert rig.table.view()["players"][0]["colour"] is None
    assert "hold your seat button to play red" in rig.table.view()["prompt"]["text"]
    assert rig.last_cue()["text"] == "Ann: red? Hold your seat button to play it"
    assert rig.buttons.press("seat-1") is not None  # Bob is not asked yet: nothing
    assert rig.buttons.press("seat-0", hold=True) is None  # the hold claims the colour shown
    assert rig.events()[-1] == {"type": "claim", "seat": 0, "colour": "red"}
    assert (
        "Bob: tap the Spy card of your colour, or hold your seat button to play green"
        in (rig.table.view()["prompt"]["text"])
    )


def test_several_press_choices_for_one_seat_need_the_tablet() -> None:
    toy = Toy(GameData("toy", "Toy", 3, 3, {}, {}))
    table = Table(Journal(":memory:"), {"toy": toy})
    buttons = TableButtons(
        table, PinLayout.parse({"undo_hold": HOLD}), pin_factory=MockFactory(pin_class=MockPin)
    )
    try:
        table.start("toy", ["A", "B", "C"])
        assert buttons.press("seat-0") == "A's button: more than one choice, choose on the tablet."
        assert len(list(table.journal.entries())) == 1
    finally:
        buttons.close()


def test_spy_team_missions_are_picked_by_a_press_and_settled_by_a_hold(rig: Rig) -> None:
    rig.table.start("spy-team", ["Ann", "Bob", "Cy", "Di"], {"start": 0})
    rig.seat(0)  # C.A.T. (Ann and Cy): the first mission is shown already, the press shows the next
    rig.seat(2)  # either teammate's button steps through the team's missions
    assert [event["type"] for event in rig.events()] == ["start", "pick", "pick"]
    assert "C.A.T.: Ann takes 2, Cy takes 4 (2/4)?" in rig.table.view()["prompt"]["text"]
    assert rig.table.view()["teams"][0]["mission"] is None  # a press settles nothing
    assert rig.buttons.press("seat-2", hold=True) is None
    assert rig.events()[-1] == {"type": "mission", "seat": 0, "tile": "2/4", "target": 2}
    assert rig.table.view()["teams"][0]["mission"] == {"tile": "2/4", "targets": {"0": 2, "2": 4}}
    assert rig.buttons.press("seat-3", hold=True) is None  # B.I.R.D. settles the first one shown
    assert rig.table.view()["teams"][1]["mission"] == {"tile": "1/5", "targets": {"1": 1, "3": 5}}
    assert rig.table.view()["prompt"]["text"] == "Ann: lead the first trick"


def test_a_seat_button_never_eliminates_a_player(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})
    for colour in ("green", "red", "blue"):
        rig.table.tap(card=f"spy/{colour}-spy")
    assert {"type": "eliminate", "seat": 1} in [a.to_event() for a in rig.table.legal_actions()]
    rig.seat(1)
    assert rig.table.view()["players"][1]["eliminated"] is False
    assert rig.events()[-1]["type"] == "tap"
    assert rig.last_cue()["cue"] == "error" and "answers nothing" in rig.last_cue()["text"]


def test_a_held_seat_button_puts_that_player_out(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})
    for colour in ("green", "red", "blue"):
        rig.table.tap(card=f"spy/{colour}-spy")
    assert rig.buttons.press("seat-2", hold=True) is None  # Cy dropped a card, on Ann's turn
    assert rig.events()[-1] == {"type": "eliminate", "seat": 2}
    assert [p["eliminated"] for p in rig.table.view()["players"]] == [False, False, True]
    assert rig.table.current_seat() == 0  # still Ann's turn


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
    rig.hold(DEFAULT_PINS["undo_button"], until=lambda: rig.cues and rig.last_cue()["cue"] == "undo")
    assert [event["type"] for event in rig.events()] == ["start"]


def test_a_short_press_on_undo_takes_back_nothing_and_says_to_hold_it(rig: Rig) -> None:
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})
    rig.table.tap(card="spy/green-spy")
    rig.press(DEFAULT_PINS["undo_button"])
    assert [event["type"] for event in rig.events()] == ["start", "tap"]
    assert rig.last_cue()["cue"] == "error" and "Hold Undo" in rig.last_cue()["text"]
    # The hold timer must not fire after the release either: once gpiozero's own clock says Undo has
    # been up longer than its hold, nothing more was taken back or said.
    said, undo = len(rig.cues), rig.buttons.undo_button
    assert undo is not None
    wait_for(lambda: (undo.inactive_time or 0) > HOLD)
    assert [event["type"] for event in rig.events()] == ["start", "tap"] and len(rig.cues) == said


def test_undo_is_held_one_and_a_half_seconds_by_default() -> None:
    table = Table(Journal(":memory:"), build_engines(CATALOG))
    factory = MockFactory(pin_class=MockPin)
    buttons = TableButtons(table, PinLayout.parse(None), pin_factory=factory)
    try:
        table.start("spy", ["Ann", "Bob"], {})
        assert buttons.undo_button is not None and buttons.undo_button.hold_time == 1.5
        pin, undo = factory.pin(DEFAULT_PINS["undo_button"]), buttons.undo_button
        pin.drive_low()
        wait_for(lambda: (undo.active_time or 0) >= 0.4)  # a firm bump, far short of the hold
        pin.drive_high()
        assert table.game == "spy"
    finally:
        buttons.close()


def test_undo_with_nothing_to_undo_is_caught(rig: Rig) -> None:
    undo = DEFAULT_PINS["undo_button"]
    rig.hold(undo, until=lambda: rig.cues)  # raises GameError inside: logged, cued
    assert rig.last_cue()["cue"] == "error" and "Nothing to undo" in rig.last_cue()["text"]


# The buttons read the typed actions, never field names


class Toy(Engine[list[Event]]):
    """A game whose actions name their seats in fields no rule of thumb would find: the buttons must
    go by `Action.seat`, `Action.primary` and `Action.confirm` alone."""

    game = "toy"
    action_keys = {"pick": frozenset({"player"}), "go": frozenset(), "oust": frozenset({"player"})}

    def setup(self, players: list[str], options: dict[str, Any]) -> list[Event]:
        return []

    def _apply(self, state: list[Event], event: Event) -> list[Cue]:
        state.append(event)
        return []

    def prompt(self, state: list[Event]) -> Prompt:
        actions = (
            Action("oust", "Bob is out", {"player": 1}, seat=1, confirm=True),
            Action("pick", "Pick Cy", {"player": 2}, seat=2),
            Action("pick", "Pick Ann", {"player": 0}, seat=0),
            Action("pick", "Pick Ann again", {"player": 0}, seat=0),
            Action("oust", "Cy is out", {"player": 2}, seat=2, confirm=True),
            Action("go", "Go on", primary=True),
        )
        return Prompt("Ann: pick a player", 0, False, actions)

    def status(self, state: list[Event]) -> Status:
        return Status.PLAYING

    def outcome(self, state: list[Event]) -> Outcome | None:
        return None

    def public_view(self, state: list[Event]) -> dict[str, Any]:
        players = [{"seat": s, "name": n, "score": 0, "eliminated": False} for s, n in enumerate("ABC")]
        return {
            "game": "toy",
            "status": "playing",
            "players": players,
            "prompt": self.prompt(state).to_json(),
        }


def test_buttons_post_what_the_actions_declare() -> None:
    toy = Toy(GameData("toy", "Toy", 3, 3, {}, {}))
    table = Table(Journal(":memory:"), {"toy": toy})
    factory = MockFactory(pin_class=MockPin)
    buttons = TableButtons(table, PinLayout.parse(None), pin_factory=factory)
    try:
        table.start("toy", ["A", "B", "C"])
        buttons.press_seat(2)  # the pick, not the ouster of the same seat
        buttons.press_seat(1)  # only an ouster there: never by a press
        buttons.hold_seat(1)  # nor by a hold, when the action does not say a hold gives it
        buttons.hold_seat(2)  # nothing to hold for there: the hold is the press
        buttons.press_next()
        events = effective_events(entry.event for entry in table.journal.entries())
        assert events[1:] == [{"type": "pick", "player": 2}, {"type": "pick", "player": 2}, {"type": "go"}]
    finally:
        buttons.close()


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
