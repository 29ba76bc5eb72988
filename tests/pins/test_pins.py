"""The pin factory choice (real pins on a Pi, mock pins elsewhere, one log line), lgpio's working
directory under systemd, and the checked pin map from the config's [pins]."""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from gpiozero import LED, Buzzer, GPIOPinInUse, TonalBuzzer
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.core.config import ConfigError, load_config
from companion.pins.devices import (
    DEFAULT_PINS,
    PinLayout,
    TableInputs,
    TableOutputs,
    choose_pin_factory,
    prepare_lgpio_dir,
    reader_pins,
)
from companion.pins.feedback import Feedback, Sound

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"


class LGPIOFactory:
    """Stands in for gpiozero's lgpio factory on a Pi 5: only its class name is looked at."""


def no_gpio() -> Any:
    import warnings

    warnings.warn("Falling back from lgpio: No module named 'lgpio'", stacklevel=1)
    raise RuntimeError("Unable to load any default pin factory!")


def test_without_gpio_it_falls_back_to_mock_pins_and_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="companion.pins.devices")
    factory, name = choose_pin_factory(default_factory=no_gpio, work_dir=None)
    assert name == "mock"
    assert isinstance(factory, MockFactory) and factory.pin_class is MockPWMPin
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 1 and "mock pins" in lines[0] and "lgpio" in lines[0]
    TonalBuzzer(18, pin_factory=factory).play(440.0)  # PWM works: the buzzer can play tones


def test_this_machine_without_gpio_gets_mock_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    if Path("/proc/device-tree/model").exists():
        pytest.skip("this machine may have real GPIO")
    factory, name = choose_pin_factory()  # gpiozero's own search, for real
    assert name == "mock" and isinstance(factory, MockFactory)


def test_on_a_pi_gpiozero_chooses_and_the_log_names_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="companion.pins.devices")
    real = LGPIOFactory()
    factory, name = choose_pin_factory(default_factory=lambda: real)
    assert factory is real and name == "lgpio"
    assert [record.getMessage() for record in caplog.records] == ["GPIO: gpiozero's lgpio pins"]


def test_a_fallback_on_a_pi_names_what_failed(caplog: pytest.LogCaptureFixture) -> None:
    class NativeFactory:
        pass

    def lgpio_failed() -> Any:
        import warnings

        warnings.warn("Falling back from lgpio: [Errno 13] Permission denied: '.lgd-nfy-3'", stacklevel=1)
        return NativeFactory()

    caplog.set_level(logging.INFO, logger="companion.pins.devices")
    _, name = choose_pin_factory(default_factory=lgpio_failed)
    assert name == "native"
    [line] = [record.getMessage() for record in caplog.records]
    assert "native pins" in line and "Permission denied" in line


@pytest.mark.parametrize("env", [None, "mock", "MOCK"])
def test_mock_pins_when_asked(monkeypatch: pytest.MonkeyPatch, env: str | None) -> None:
    def must_not_run() -> Any:
        raise AssertionError("the real factory was tried")

    if env is None:
        factory, name = choose_pin_factory(force_mock=True, default_factory=must_not_run)
    else:
        monkeypatch.setenv("GPIOZERO_PIN_FACTORY", env)
        factory, name = choose_pin_factory(default_factory=must_not_run)
    assert name == "mock" and isinstance(factory, MockFactory)


# lgpio's working directory


def test_a_writable_working_directory_is_left_alone(tmp_path: Path) -> None:
    environ: dict[str, str] = {}
    assert prepare_lgpio_dir(tmp_path / "other", environ, cwd=lambda: str(tmp_path)) is None
    assert environ == {}


def test_a_read_only_working_directory_sends_lgpio_to_the_state_folder(tmp_path: Path) -> None:
    environ: dict[str, str] = {}
    gone = str(tmp_path / "not-there")  # as `/` is for the service user: not writable
    assert prepare_lgpio_dir(tmp_path, environ, cwd=lambda: gone) == str(tmp_path.resolve())
    assert environ["LG_WD"] == str(tmp_path.resolve())


def test_systemd_folders_then_the_temp_folder_come_next(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir()
    environ = {"RUNTIME_DIRECTORY": str(runtime)}
    gone = str(tmp_path / "not-there")
    assert prepare_lgpio_dir(None, environ, cwd=lambda: gone) == str(runtime.resolve())
    assert prepare_lgpio_dir(None, {}, cwd=lambda: gone) is not None  # the temp folder, at worst


def test_an_lg_wd_set_by_the_host_wins(tmp_path: Path) -> None:
    environ = {"LG_WD": "/run/companion"}
    assert prepare_lgpio_dir(tmp_path, environ, cwd=lambda: "/nowhere") == "/run/companion"
    assert environ == {"LG_WD": "/run/companion"}


def test_lg_wd_is_set_before_gpiozero_loads_lgpio(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LG_WD", raising=False)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(os, "access", lambda path, mode: str(path).startswith(str(tmp_path)))
    seen: list[str | None] = []

    def factory() -> Any:
        seen.append(os.environ.get("LG_WD"))
        return LGPIOFactory()

    choose_pin_factory(work_dir=tmp_path, default_factory=factory)
    assert seen == [str(tmp_path.resolve())]


# The pin map


def test_the_defaults_use_every_pin_once_and_leave_the_uart_free() -> None:
    pins = PinLayout.parse(None)
    assert pins.status_led is not None
    used = [
        *pins.seat_leds,
        *pins.status_led,
        *pins.seat_buttons,
        pins.buzzer,
        pins.next_button,
        pins.undo_button,
    ]
    assert len(used) == len(set(used)) == 16
    assert not {2, 3, 7, 8, 9, 10, 11, 14, 15} & set(used)  # I2C, SPI0, UART (a PN532 reader)
    # The buzzer may sit on any GPIO: gpiozero's tones are software PWM (lgpio's tx_pwm), not PWM0/1.


def test_false_or_an_empty_list_leaves_a_part_out() -> None:
    pins = PinLayout.parse({"buzzer": False, "status_led": [], "seat_buttons": False})
    assert pins.buzzer is None and pins.status_led is None and pins.seat_buttons == ()
    assert list(pins.seat_leds) == DEFAULT_PINS["seat_leds"]


@pytest.mark.parametrize(
    ("pins", "message"),
    [
        ({"buzzer": 5}, "GPIO 5 is used twice"),
        ({"seat_leds": [4, 4]}, "GPIO 4 is used twice"),
        ({"seat_leds": [1, 4, 0, 7, 8, 9]}, "at most 5 seats"),
        ({"status_led": [16, 20]}, "3 pins"),
        ({"buzzer_type": "loud"}, "passive"),
        ({"undo_hold": "long"}, "seconds"),
        ({"buzer": 18}, "unknown keys: buzer"),
        ({"seat_leds": 5}, "list of GPIO numbers"),
    ],
)
def test_a_wrong_pin_map_is_a_config_error(pins: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PinLayout.parse(pins)


@pytest.mark.parametrize("device", ["tty:AMA0:pn532", "tty:S0:pn532", "tty:AMA0", "tty:AMA:pn532", "tty:S"])
def test_a_reader_on_the_uart_holds_gpio_14_and_15(device: str) -> None:
    held = reader_pins([{"device": "virtual"}, {"device": device, "seat": 1}])
    assert sorted(held) == [14, 15] and device in held[14]
    assert PinLayout.parse(None, reserved=held) == PinLayout.parse(
        None
    )  # the defaults keep clear of the UART
    for pins in (
        {"next_button": 14},
        {"seat_buttons": [17, 15]},
        {"buzzer": "GPIO14"},
        {"buzzer": "BOARD10"},
    ):
        with pytest.raises(ConfigError, match=r"is on GPIO 1[45], which the reader on the UART"):
            PinLayout.parse(pins, reserved=held)


@pytest.mark.parametrize(
    "device", ["auto", "usb", "usb:054c:06c1", "virtual", "udp:127.0.0.1:5000", "tty:USB0:pn532", "tty:AMA10"]
)
def test_other_readers_leave_gpio_14_and_15_free(device: str) -> None:
    held = reader_pins([{"device": device}])
    assert held == {}
    assert PinLayout.parse({"next_button": 14, "undo_button": 15}, reserved=held).next_button == 14


def test_header_pin_names_count_as_their_gpio() -> None:
    with pytest.raises(ConfigError, match="used twice"):
        PinLayout.parse({"buzzer": "BOARD11"})  # header pin 11 is GPIO 17, seat 1's button
    with pytest.raises(ConfigError, match="used twice"):
        PinLayout.parse({"buzzer": "J8:32"})  # header pin 32 is GPIO 12, Undo


def test_a_layout_builds_one_composite_device_for_the_outputs_and_one_for_the_buttons() -> None:
    factory = MockFactory(pin_class=MockPWMPin)
    layout = PinLayout.parse({"buzzer_type": "active", "next_button": False})
    outputs = TableOutputs(layout, pin_factory=factory)
    inputs = TableInputs(layout, pin_factory=factory)
    assert len(outputs) == 7 and len(outputs.seat_leds) == 5 and isinstance(outputs.buzzer, Buzzer)
    assert len(inputs) == 6 and inputs.next_button is None and inputs.undo_button is not None
    assert inputs.undo_button.hold_time == layout.undo_hold
    outputs.close()
    inputs.close()
    assert outputs.closed and inputs.closed
    # A pin taken half way through the build: what was made before it is let go again.
    blocker = LED(DEFAULT_PINS["buzzer"], pin_factory=factory)
    with pytest.raises(GPIOPinInUse):
        TableOutputs(layout, pin_factory=factory)
    blocker.close()
    TableOutputs(layout, pin_factory=factory).close()  # the seat and status LEDs were free


def test_the_example_config_loads_and_drives_mock_pins() -> None:
    config = load_config(HARDWARE / "companion.example.toml", env={})
    assert config.readers == [{"device": "auto"}] and config.token
    assert PinLayout.parse(config.pins) == PinLayout.parse(None)  # it spells out the defaults
    assert Sound.from_config(config.sound).quiet_hours is not None
    feedback = Feedback(PinLayout.of(config), config.sound, pin_factory=MockFactory(pin_class=MockPWMPin))
    feedback.close()


def test_the_mat_marks_the_tap_zone_every_seat_and_next_and_undo() -> None:
    svg = ElementTree.parse(HARDWARE / "mat.svg").getroot()
    ids = {element.get("id") for element in svg.iter()}
    assert {"tap-zone", "next-button", "undo-button", "status-led"} <= ids
    assert {f"seat-{seat}" for seat in range(1, 6)} <= ids
    assert svg.get("width") == "420mm" and svg.get("height") == "297mm"  # A3 landscape, true size
    text = " ".join(element.text or "" for element in svg.iter())
    for pin in [*DEFAULT_PINS["seat_leds"], *DEFAULT_PINS["seat_buttons"]]:
        assert f"GPIO {pin}" in text  # the mat names the defaults of [pins]


def test_the_mat_drills_the_holes_the_parts_list_buttons_need() -> None:
    svg = ElementTree.parse(HARDWARE / "mat.svg").getroot()
    holes = [c for c in svg.iter("{http://www.w3.org/2000/svg}circle") if c.get("class") == "cut"]
    assert len(holes) == 7  # five seats, Next and Undo
    assert {float(hole.get("r", 0)) * 2 for hole in holes} == {16.0}  # mm: the viewBox is the page in mm
    text = " ".join(element.text or "" for element in svg.iter())
    assert "16 mm holes" in text and "20 mm" not in text
    parts = (HARDWARE / "parts.md").read_text(encoding="utf-8")
    [buttons] = [line for line in parts.splitlines() if "push button" in line]
    assert "16 mm panel mount" in buttons
    assert "16 mm hole" in (HARDWARE / "README.md").read_text(encoding="utf-8")


def test_the_pin_table_gives_each_gpio_its_header_pin() -> None:
    from companion.pins.devices import _HEADER

    readme = (HARDWARE / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| [^|]+ \| (\d+) \| (\d+) \| `", readme, flags=re.M)
    assert len(rows) == 16  # every part of the default build
    for gpio, header in rows:
        assert _HEADER[int(header)] == int(gpio), (gpio, header)


def test_the_udev_rule_and_blacklist_cover_nfcpy_usb_readers() -> None:
    from nfc.clf.device import usb_device_map

    rules = (HARDWARE / "udev" / "60-companion-nfc.rules").read_text(encoding="utf-8")
    for vid, pid in usb_device_map:
        assert f'ATTR{{idVendor}}=="{vid:04x}", ATTR{{idProduct}}=="{pid:04x}"' in rules
    blacklist = (HARDWARE / "modprobe" / "blacklist-companion-nfc.conf").read_text(encoding="utf-8")
    modules = {line.split()[1] for line in blacklist.splitlines() if line.startswith("blacklist ")}
    assert modules == {"port100", "pn533", "pn533_usb", "nfc"}
