"""`POST /api/buttons`: the virtual seat buttons, Next and Undo of a table on mock pins, pushed through
the very code a GPIO press runs (`TableButtons.press` drives the mock pins)."""

from __future__ import annotations

from typing import Any

import pytest

from companion.appliance.daemon import Daemon
from companion.pins.buttons import TableButtons
from tests.conftest import AUTH, BUTTON_HOLD

HOLD = BUTTON_HOLD


@pytest.fixture
def table(buttons_daemon: Daemon) -> Daemon:
    return buttons_daemon


def push(daemon: Daemon, body: Any) -> Any:
    return daemon.app.test_client().post("/api/buttons", json=body, headers=AUTH)


def events(daemon: Daemon) -> list[dict[str, Any]]:
    return [entry.event for entry in daemon.journal.entries()]


def start_spy(daemon: Daemon) -> None:
    daemon.table.start("spy", ["Ann", "Bob", "Cy"], {})
    for colour in ("green", "red", "blue"):
        daemon.table.tap(card=f"spy/{colour}-spy")


def test_a_press_runs_the_gpio_path(table: Daemon) -> None:
    start_spy(table)
    pin = table.buttons.seat_buttons[1].pin
    seen = len(pin.states)
    answer = push(table, {"button": "next"})
    assert answer.status_code == 200 and answer.get_json()["turn"] == 1  # Ann passed
    assert events(table)[-1] == {"type": "pass"}
    refused = push(table, {"button": "seat-1", "hold": False})
    assert refused.status_code == 409 and refused.get_json()["error"] == "Bob's button answers nothing now."
    # The mock pin itself went down and up: the press came through gpiozero like a finger's.
    assert [state.state for state in pin.states[seen:]] == [False, True]


def test_a_hold_is_a_hold_and_a_press_is_not(table: Daemon) -> None:
    start_spy(table)
    refused = push(table, {"button": "seat-2"})
    assert refused.status_code == 409 and refused.get_json()["error"] == "Cy's button answers nothing now."
    assert table.table.view()["players"][2]["eliminated"] is False
    answer = push(table, {"button": "seat-2", "hold": True})
    assert answer.status_code == 200 and answer.get_json()["players"][2]["eliminated"] is True
    assert events(table)[-1] == {"type": "eliminate", "seat": 2}


def test_undo_takes_a_hold(table: Daemon) -> None:
    start_spy(table)
    short = push(table, {"button": "undo", "hold": False})
    assert short.status_code == 409 and "Hold Undo for 0.1 s" in short.get_json()["error"]
    assert events(table)[-1]["type"] == "tap"
    assert push(table, {"button": "undo", "hold": True}).status_code == 200
    assert events(table)[-1] == {"type": "undo"}
    assert table.table.view()["players"][2]["colour"] is None


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ([1], "JSON object"),
        (
            {"hold": True},
            "'button' must be one of seat-0, seat-1, seat-2, seat-3, seat-4, next, undo, not None",
        ),
        ({"button": "seat-5"}, "'button' must be one of"),
        ({"button": "seat-x"}, "'button' must be one of"),
        ({"button": 3}, "'button' must be one of"),
        ({"button": "next", "hold": "yes"}, "'hold' must be true or false"),
        ({"button": "next", "seat": 2}, "takes only 'button' and 'hold', not seat"),
    ],
)
def test_a_malformed_press_is_a_400_naming_what_is_wrong(table: Daemon, body: Any, words: str) -> None:
    start_spy(table)
    before = events(table)
    answer = push(table, body)
    assert answer.status_code == 400 and words in answer.get_json()["error"], answer.get_json()
    assert events(table) == before


def test_real_buttons_are_not_pressed_from_afar(table: Daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    start_spy(table)
    monkeypatch.setattr(TableButtons, "virtual", property(lambda self: False))
    before = events(table)
    answer = push(table, {"button": "next"})
    assert answer.status_code == 409
    assert answer.get_json()["error"].startswith("Real GPIO buttons drive this table: press them there.")
    assert events(table) == before


def test_the_daemon_knows_mock_pins_from_real_ones(table: Daemon) -> None:
    assert table.gpio == "mock" and table.buttons.virtual is True
