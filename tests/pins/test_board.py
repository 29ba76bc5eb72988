"""Pins on a Raspberry Pi never fall back to mock pins in silence (issue 26). A fake device-tree model
file makes this machine claim to be a Pi; its pins then fail for real (gpiozero's own search finds
no GPIO here): the daemon logs the cause and the fix, /healthz is not ok, doctor FAILs. Off a Pi the
laptop's mock pins stay, and are fine."""

from __future__ import annotations

import importlib.metadata
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.appliance.cli import main
from companion.appliance.daemon import Daemon
from companion.pins import board
from companion.pins.devices import PinLayout
from tests.conftest import make_config
from tests.servers import free_port

PI5 = "Raspberry Pi 5 Model B Rev 1.0\x00"  # as /proc/device-tree/model has it: NUL-terminated
NO_PINS = {
    key: False for key in ("seat_leds", "status_led", "buzzer", "seat_buttons", "next_button", "undo_button")
}


@pytest.fixture(autouse=True)
def real_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """gpiozero's own search for a factory, as on a Pi: no GPIOZERO_PIN_FACTORY, no --mock-pins."""
    if any(
        Path(path).exists() for path in ("/proc/device-tree/model", "/sys/firmware/devicetree/base/model")
    ):
        pytest.skip("this machine has a device tree: its pins may really open")
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)


@pytest.fixture
def a_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    model = tmp_path / "model"
    model.write_text(PI5)
    monkeypatch.setattr(board, "MODEL_FILES", (tmp_path / "not-there", model))
    return model


@pytest.fixture
def not_a_pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(board, "MODEL_FILES", (tmp_path / "not-there",))


@contextmanager
def real_pins_daemon(
    tmp_path: Path, pins: dict[str, Any] | None = None, mock: bool = False
) -> Iterator[Daemon]:
    config = make_config(tmp_path / "journal.db")
    config.mock_pins = mock
    config.pins = pins or {}
    daemon = Daemon(config)
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.close()


def test_the_device_tree_says_which_board(
    a_pi: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert board.board_model() == "Raspberry Pi 5 Model B Rev 1.0" and board.is_raspberry_pi()
    a_pi.write_text("Some Other Board\x00")
    assert not board.is_raspberry_pi()
    monkeypatch.setattr(board, "MODEL_FILES", (tmp_path / "not-there",))
    assert board.board_model() is None and not board.is_raspberry_pi()


def test_on_a_pi_pins_that_cannot_open_are_a_loud_failure(
    a_pi: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with real_pins_daemon(tmp_path) as daemon:
        [line] = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert "this Raspberry Pi's pins cannot be opened" in line.getMessage()
        assert "Falling back from lgpio" in line.getMessage()  # the cause, as gpiozero said it
        assert "fix: " in line.getMessage() and "python3-gpiozero" in line.getMessage()
        assert not any("using mock pins" in r.getMessage() for r in caplog.records)  # not the quiet one
        health = daemon.app.test_client().get("/healthz")
        assert health.status_code == 503
        body = health.get_json()
        assert body["ok"] is False and body["gpio"] == "unavailable"
        assert "cannot be opened" in body["gpio_error"] and "fix: " in body["gpio_error"]
        # The game still plays from the tablet; the pins it drives are mock ones standing in.
        assert isinstance(daemon.pins.factory, MockFactory) and daemon.pins.factory.pin_class is MockPWMPin


def test_off_a_pi_no_gpio_is_still_mock_pins_and_fine(not_a_pi: None, tmp_path: Path) -> None:
    with real_pins_daemon(tmp_path) as daemon:
        body = daemon.app.test_client().get("/healthz").get_json()
        assert body["ok"] is True and body["gpio"] == "mock" and "gpio_error" not in body


@pytest.mark.parametrize("pins, mock", [(NO_PINS, False), ({}, True)])
def test_on_a_pi_no_pin_map_or_mock_pins_asked_for_are_fine(
    a_pi: Path, tmp_path: Path, pins: dict[str, Any], mock: bool
) -> None:
    assert PinLayout.parse(NO_PINS).uses_pins is False and PinLayout.parse(None).uses_pins is True
    with real_pins_daemon(tmp_path, pins, mock) as daemon:
        body = daemon.app.test_client().get("/healthz").get_json()
        assert body["ok"] is True and body["gpio"] == "mock"


class BusyFactory(MockFactory):  # type: ignore[misc]
    """A real-looking factory (not named mock) whose GPIO 18 another program holds, as lgpio says."""

    def pin(self, spec: Any, **kwargs: Any) -> Any:
        if spec == 18:
            raise OSError("GPIO busy")
        return super().pin(spec, **kwargs)


def test_on_a_pi_a_pin_that_fails_to_open_is_a_failure_too(
    a_pi: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = board.open_pins

    def open_busy(layout: PinLayout, force_mock: bool = False, work_dir: Path | None = None) -> Any:
        return real(layout, force_mock, work_dir, default_factory=lambda: BusyFactory(pin_class=MockPWMPin))

    monkeypatch.setattr("companion.appliance.daemon.open_pins", open_busy)
    with real_pins_daemon(tmp_path) as daemon:
        body = daemon.app.test_client().get("/healthz").get_json()
        assert body["ok"] is False and body["gpio"] == "unavailable"
        assert "OSError: GPIO busy" in body["gpio_error"]
        assert type(daemon.pins.factory) is MockFactory  # the busy board was let go


def test_gpiozero_in_use_is_this_venvs_pip_copy() -> None:
    found = board.gpiozero_in_use()
    assert found.version == importlib.metadata.version("gpiozero")
    assert found.origin == ("venv" if sys.prefix != sys.base_prefix else "pip")
    assert found.path.is_relative_to(Path(sys.prefix).resolve()) and found.version in found.describe()


def test_the_factory_names_its_chip() -> None:
    class LGPIOFactory:  # what doctor reads of gpiozero's: its `chip`
        chip = 0

    assert board.factory_name(LGPIOFactory(), "lgpio") == "lgpio on /dev/gpiochip0"
    assert board.factory_name(MockFactory(), "mock") == "mock"


# companion doctor


def doctor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    monkeypatch.setattr("companion.core.config.INSTALLED_CONFIG", tmp_path / "not-installed.toml")
    monkeypatch.setattr("companion.appliance.doctor.system.SERVICE_UNIT", tmp_path / "not-installed.service")
    config = tmp_path / "companion.toml"
    config.write_text('[server]\ntoken = "a-long-enough-token"\n[reader]\ndevice = "virtual"\n')
    config.chmod(0o640)
    status = main(
        ["doctor", "--config", str(config), "--db", str(tmp_path / "j.db"), "--port", str(free_port())]
    )
    return status, capsys.readouterr().out


def test_doctor_fails_a_pi_whose_pins_cannot_open(
    a_pi: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, out = doctor(tmp_path, capsys, monkeypatch)
    assert status == 1
    [pins] = [line for line in out.splitlines() if line.startswith(("ok   pins", "warn pins", "FAIL pins"))]
    assert pins.startswith("FAIL pins: GPIO: this Raspberry Pi's pins cannot be opened"), pins
    assert "-> fix: " in pins and "python3-gpiozero" in pins
    [gpiozero] = [line for line in out.splitlines() if " gpiozero: " in line]
    version = importlib.metadata.version("gpiozero")
    assert gpiozero.startswith(f"warn gpiozero: gpiozero {version} from pip's copy in the venv"), gpiozero
    assert "gpiochip4" in gpiozero and "sudo apt install python3-gpiozero" in gpiozero


def test_doctor_off_a_pi_names_gpiozero_and_warns_of_mock_pins(
    not_a_pi: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out = doctor(tmp_path, capsys, monkeypatch)
    assert "warn pins: no GPIO here: mock pins will be used" in out
    assert f"ok   gpiozero: gpiozero {importlib.metadata.version('gpiozero')} from " in out
