"""The power-off hold (issue 26): Next and Undo held together for `power_off_hold` seconds play the
`power-off` cue, stop the daemon (journal closed), then run `power_off_command`; neither button acts
alone once both are down; the demo refuses; the virtual buttons cannot give it. On gpiozero's mock
pins, with the command injected (one that writes a marker file)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from companion.appliance.daemon import Daemon, run_power_off
from companion.core.config import ConfigError
from companion.games import build_engines
from companion.games.catalog import load_catalog
from companion.pins.buttons import TableButtons
from companion.pins.devices import DEFAULT_PINS, PinLayout
from companion.table.entries import effective_events
from companion.table.journal import Journal
from companion.table.table import Table
from tests.conftest import AUTH, make_config
from tests.servers import free_port
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
HOLD = 0.2  # undo_hold
POWER_OFF = 1.0  # power_off_hold: longer than Undo's hold, as the default 5 s is
NEXT, UNDO = DEFAULT_PINS["next_button"], DEFAULT_PINS["undo_button"]


@dataclass
class Rig:
    table: Table
    factory: MockFactory
    buttons: TableButtons
    powered_off: threading.Event
    cues: list[dict[str, Any]] = field(default_factory=list)

    def down(self, pin: int) -> None:
        self.factory.pin(pin).drive_low()  # buttons pull up: pressed = low

    def up(self, pin: int) -> None:
        self.factory.pin(pin).drive_high()

    def inputs(self) -> list[dict[str, Any]]:
        return effective_events(entry.event for entry in self.table.journal.entries())


def make_rig(power_off_hold: float = POWER_OFF) -> Rig:
    table = Table(Journal(":memory:"), build_engines(load_catalog()))
    factory = MockFactory(pin_class=MockPin)
    layout = PinLayout.parse({"undo_hold": HOLD, "power_off_hold": power_off_hold})
    powered_off = threading.Event()
    buttons = TableButtons(table, layout, pin_factory=factory, power_off=powered_off.set)
    rig = Rig(table, factory, buttons, powered_off)
    table.listeners.append(lambda kind, cue: rig.cues.append(cue.to_json()) if kind == "cue" else None)
    return rig


@pytest.fixture
def rig() -> Iterator[Rig]:
    made = make_rig()
    yield made
    made.buttons.close()


def spy_turn(rig: Rig) -> list[dict[str, Any]]:
    """SPY, Ann's turn: Next would pass, Undo would take back the last claim."""
    rig.table.start("spy", ["Ann", "Bob", "Cy"], {})
    for colour in ("green", "red", "blue"):
        rig.table.tap(card=f"spy/{colour}-spy")
    assert any(a.primary for a in rig.table.legal_actions())  # Next has something to post
    return rig.inputs()


@pytest.mark.parametrize("first", [NEXT, UNDO])
def test_next_and_undo_held_together_power_off_and_neither_acts_alone(rig: Rig, first: int) -> None:
    before = spy_turn(rig)
    cued = len(rig.cues)
    rig.down(first)
    rig.down(UNDO if first == NEXT else NEXT)
    assert rig.powered_off.wait(POWER_OFF + 5)  # held past Undo's own hold, too
    rig.up(NEXT)
    rig.up(UNDO)
    assert rig.inputs() == before  # no pass, no undo
    assert rig.cues[cued:] == []  # not even a hint: the buttons were never pressed alone


def test_let_go_too_early_nothing_happens_but_a_hint(rig: Rig) -> None:
    before = spy_turn(rig)
    rig.down(NEXT)
    rig.down(UNDO)
    timer = rig.buttons._chord_timer  # the power-off hold's
    assert timer is not None
    wait_for(lambda: rig.buttons._held.get("undo"))  # past Undo's hold, short of the power-off hold
    rig.up(UNDO)
    assert rig.cues[-1]["cue"] == "error" and "Hold Next and Undo together for 1 s" in rig.cues[-1]["text"]
    rig.up(NEXT)  # still part of the gesture: Next does not pass
    assert rig.inputs() == before
    timer.join(timeout=5)  # the hold's timer was stopped: its thread ended without powering off
    assert not timer.is_alive() and not rig.powered_off.is_set()


def test_next_acts_when_let_go_and_alone(rig: Rig) -> None:
    before = spy_turn(rig)
    rig.down(NEXT)
    assert rig.inputs() == before  # pushed: nothing yet (it may still become the power-off gesture)
    rig.up(NEXT)
    assert rig.inputs() == [*before, {"type": "pass"}]


def wait_for_inputs(rig: Rig, inputs: list[dict[str, Any]]) -> None:
    """Wait until the journal holds `inputs`: a hold acts on gpiozero's own thread."""
    wait_for(lambda: rig.inputs() == inputs)


def test_an_undo_held_before_next_went_down_stands(rig: Rig) -> None:
    before = spy_turn(rig)
    rig.down(UNDO)
    wait_for_inputs(rig, before[:-1])  # Undo's hold took back the last claim
    rig.down(NEXT)  # from now on the power-off gesture
    assert rig.powered_off.wait(POWER_OFF + 5)
    rig.up(NEXT)
    rig.up(UNDO)
    assert rig.inputs() == before[:-1]


def test_a_power_off_hold_of_zero_disables_the_gesture() -> None:
    made = make_rig(power_off_hold=0)
    try:
        before = spy_turn(made)
        made.down(NEXT)
        made.down(UNDO)
        made.up(NEXT)  # Next alone, as ever: Ann passes
        assert made.inputs() == [*before, {"type": "pass"}]
        wait_for_inputs(made, before)  # and Undo's hold, as ever, takes it back
        made.up(UNDO)
        assert not made.powered_off.is_set()
    finally:
        made.buttons.close()


def test_the_virtual_buttons_never_power_off(rig: Rig) -> None:
    spy_turn(rig)
    rig.buttons.press("undo", hold=True)
    rig.buttons.press("next", hold=True)
    assert not rig.powered_off.is_set()
    with pytest.raises(KeyError):
        rig.buttons.press("power-off")


@pytest.mark.parametrize(
    "pins, message",
    [
        ({"power_off_hold": -1}, "power_off_hold must be a number of seconds"),
        ({"power_off_command": "systemctl poweroff"}, "power_off_command must be a command as a list"),
        ({"power_off_command": []}, "power_off_command must be a command as a list"),
    ],
)
def test_bad_power_off_settings_are_refused(pins: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PinLayout.parse(pins)


def test_the_defaults_are_five_seconds_and_systemctl_poweroff() -> None:
    layout = PinLayout.parse(None)
    assert layout.power_off_hold == 5 and layout.power_off_command == ("systemctl", "poweroff")


# The daemon


def marker_command(tmp_path: Path, db: Path) -> list[str]:
    """Writes whether the journal's WAL file was still there (an open journal) when it ran."""
    script = 'if [ -e "$1-wal" ]; then echo open; else echo closed; fi > "$2"'
    return ["sh", "-c", script, "sh", str(db), str(tmp_path / "marker")]


def pin_daemon(tmp_path: Path, demo: bool) -> Daemon:
    db = tmp_path / "journal.db"
    config = make_config(db)
    config.pins = {
        "undo_hold": HOLD,
        "power_off_hold": POWER_OFF,
        "power_off_command": marker_command(tmp_path, db),
    }
    return Daemon(config, demo=demo)


def hold_both(daemon: Daemon) -> None:
    factory = daemon.buttons.next_button.pin_factory  # type: ignore[union-attr]
    factory.pin(NEXT).drive_low()
    factory.pin(UNDO).drive_low()


def test_the_demo_refuses_and_runs_nothing(tmp_path: Path) -> None:
    daemon = pin_daemon(tmp_path, demo=True)
    refused = threading.Event()
    daemon.table.listeners.append(
        lambda kind, cue: refused.set() if kind == "cue" and "off in the demo" in cue.text else None
    )
    stopped = threading.Event()
    daemon.stop = stopped.set
    daemon.start()
    try:
        hold_both(daemon)
        assert refused.wait(POWER_OFF + 5)  # the refusal comes where the power-off would begin
        assert not daemon.powering_off.is_set() and not stopped.is_set()
        assert not (tmp_path / "marker").exists()
    finally:
        daemon.close()


def test_the_daemon_plays_the_cue_then_stops(tmp_path: Path) -> None:
    daemon = pin_daemon(tmp_path, demo=False)
    heard: list[str] = []
    daemon.table.listeners.append(lambda kind, cue: heard.append(cue.name) if kind == "cue" else None)
    stopped = threading.Event()
    daemon.stop = stopped.set
    daemon.start()
    try:
        hold_both(daemon)
        assert stopped.wait(POWER_OFF + 10)
        assert daemon.powering_off.is_set() and heard[-1] == "power-off"
        assert not (tmp_path / "marker").exists()  # the command waits for serve() to close everything
    finally:
        daemon.close()


def test_companion_run_closes_the_journal_then_runs_the_command(tmp_path: Path) -> None:
    """The whole gesture in a real `companion run`: it ends the process, so it runs in one."""
    db = tmp_path / "journal.db"
    command = ", ".join(json.dumps(part) for part in marker_command(tmp_path, db))  # TOML strings
    config = tmp_path / "companion.toml"
    config.write_text(
        f'[server]\ntoken = "t"\n[journal]\npath = "{db}"\n[reader]\ndevice = "virtual"\n'
        f"[pins]\npower_off_hold = {POWER_OFF}\npower_off_command = [{command}]\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("COMPANION_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tests/pins/power_off_table.py"), str(config), str(free_port())],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output, _ = process.communicate(timeout=60)  # the gesture ends it: no terminate needed
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, output
    assert (tmp_path / "marker").read_text() == "closed\n", output  # the journal was closed first
    assert "power-off: the journal is closed; running sh -c" in output
    with sqlite3.connect(db) as journal:
        assert journal.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_command_that_fails_says_what_to_fix(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="companion.appliance.daemon")
    assert run_power_off(["sh", "-c", "echo 'Interactive authentication required.' >&2; exit 1"]) == 1
    assert "Interactive authentication required." in caplog.text and "polkit" in caplog.text
    assert run_power_off([str(Path("/nonexistent/poweroff"))]) == 1
    assert run_power_off(["true"]) == 0


def test_the_power_off_button_api_is_not_there(buttons_daemon: Daemon) -> None:
    answer = buttons_daemon.app.test_client().post("/api/buttons", json={"button": "power-off"}, headers=AUTH)
    assert 400 <= answer.status_code < 500 and not buttons_daemon.powering_off.is_set()


NODE = shutil.which("node")
RULE_CHECK = """
const rules = [];
const polkit = {Result: {YES: "yes"}, addRule: (rule) => rules.push(rule)};
eval(require("fs").readFileSync(process.argv[1], "utf8"));
const answers = {};
for (const user of ["companion", "pi", "root"]) {
  for (const id of process.argv.slice(2)) {
    answers[user + " " + id] = rules.map((rule) => rule({id}, {user})).find((a) => a) || null;
  }
}
console.log(JSON.stringify(answers));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed: the polkit rule's JavaScript is not run")
def test_the_polkit_rule_lets_only_the_service_user_power_off() -> None:
    """The shipped rule, run by node with polkit's addRule stood in (polkitd itself needs a system bus
    and a rule in /etc: docs/operations.md says how it was checked against polkitd 122)."""
    login1 = "org.freedesktop.login1."
    actions = [
        login1 + name
        for name in ("power-off", "power-off-multiple-sessions", "reboot", "power-off-ignore-inhibit")
    ]
    rule = ROOT / "systemd/companion-poweroff.rules"
    done = subprocess.run(
        [str(NODE), "-e", RULE_CHECK, str(rule), *actions, "org.freedesktop.systemd1.manage-units"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    granted = {key for key, answer in json.loads(done.stdout).items() if answer == "yes"}
    assert granted == {f"companion {login1}power-off", f"companion {login1}power-off-multiple-sessions"}


def test_doctor_warns_of_a_missing_polkit_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from companion.appliance.doctor import system

    unit, rule = tmp_path / "companion.service", tmp_path / "50-companion-poweroff.rules"
    monkeypatch.setattr(system, "SERVICE_UNIT", unit)
    monkeypatch.setattr(system, "POLKIT_RULE", rule)
    config = make_config(tmp_path / "journal.db")
    assert system.check_power_off(config) == []  # not installed as a service: nothing to say
    unit.write_text("[Service]\n")
    [missing] = system.check_power_off(config)
    assert missing.status == "warn" and str(rule) in missing.message and "install -m 644" in missing.fix
    rule.write_text("polkit.addRule(...)\n")
    [found] = system.check_power_off(config)
    assert found.status == "ok" and "systemctl poweroff" in found.message
    config.pins = {"power_off_hold": 0}
    assert system.check_power_off(config) == []
