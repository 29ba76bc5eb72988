"""The pins: which gpiozero pin factory drives them, and which GPIO does what.

On a Raspberry Pi gpiozero picks its own factory (lgpio on a Pi 5 and on current Raspberry Pi OS);
anywhere else the companion falls back to gpiozero's mock pins, so the whole product runs on a laptop.
One log line says which.

The pin map is the `[pins]` table of the config, laid over `DEFAULT_PINS` (BCM numbers, see
`hardware/README.md`). A pin set to `false` (or an empty list) leaves that part out of the build.
"""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.config import ConfigError

log = logging.getLogger(__name__)

# BCM numbers. They keep clear of I2C (2, 3), SPI0 (7-11) and the UART (14, 15) that a PN532 reader
# uses; the buzzer sits on GPIO 18, a hardware-PWM pin, for the cleanest tones.
DEFAULT_PINS: dict[str, Any] = {
    "seat_leds": [5, 6, 13, 19, 26],  # seat 0..4, one LED each
    "status_led": [16, 20, 21],  # RGB status LED: red, green, blue legs
    "status_common_anode": False,  # True for a common-anode RGB LED (its legs light when pulled low)
    "buzzer": 18,
    "buzzer_type": "passive",  # "passive": tunes (TonalBuzzer, PWM); "active": on/off beeps (Buzzer)
    "seat_buttons": [17, 27, 22, 23, 24],  # seat 0..4, each to GND (internal pull-ups)
    "next_button": 25,
    "undo_button": 12,
    "undo_hold": 1.5,  # seconds Undo must be held: a bump never takes back a move
    "button_bounce": 0.03,  # seconds of contact bounce ignored
}

MAX_SEATS = 5
PIN_LISTS = ("seat_leds", "status_led", "seat_buttons")
PIN_SCALARS = ("buzzer", "next_button", "undo_button")


def pin_map(pins: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The config's `[pins]` over the defaults, checked: every pin used once, lists not too long.

    Lists come back as lists (empty when left out), single pins as a pin or None (left out).
    """
    merged: dict[str, Any] = {**DEFAULT_PINS, **(pins or {})}
    unknown = sorted(set(merged) - set(DEFAULT_PINS))
    if unknown:
        raise ConfigError(f"[pins] has unknown keys: {', '.join(unknown)} (see docs/feedback.md)")
    for key in PIN_LISTS:
        value = merged[key]
        if value is False:
            value = []
        if not isinstance(value, list) or not all(_is_pin(pin) for pin in value):
            raise ConfigError(f"[pins] {key} must be a list of GPIO numbers, not {value!r}")
        merged[key] = list(value)
    for key in PIN_SCALARS:
        value = merged[key]
        if value is False or value is None:
            merged[key] = None
        elif not _is_pin(value):
            raise ConfigError(f"[pins] {key} must be a GPIO number or false, not {value!r}")
    if len(merged["seat_leds"]) > MAX_SEATS or len(merged["seat_buttons"]) > MAX_SEATS:
        raise ConfigError(f"[pins] has room for at most {MAX_SEATS} seats")
    if merged["status_led"] and len(merged["status_led"]) != 3:
        raise ConfigError("[pins] status_led must list 3 pins (red, green, blue), or be empty")
    if merged["buzzer_type"] not in ("passive", "active"):
        kind = merged["buzzer_type"]
        raise ConfigError(f'[pins] buzzer_type must be "passive" or "active", not {kind!r}')
    for key in ("undo_hold", "button_bounce"):
        if isinstance(merged[key], bool) or not isinstance(merged[key], int | float) or merged[key] < 0:
            raise ConfigError(f"[pins] {key} must be a number of seconds, not {merged[key]!r}")
    used: dict[str, str] = {}
    for key in (*PIN_LISTS, *PIN_SCALARS):
        value = merged[key]
        for pin in value if isinstance(value, list) else [value] if value is not None else []:
            name = str(pin).upper().removeprefix("GPIO").removeprefix("BCM")
            if name in used:
                raise ConfigError(f"[pins] GPIO {pin} is used twice: by {used[name]} and by {key}")
            used[name] = key
    return merged


def _is_pin(value: Any) -> bool:
    # gpiozero also takes names such as "GPIO17" or "BOARD11"; pass those through.
    return (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or (
        isinstance(value, str) and bool(value)
    )


def mock_factory() -> MockFactory:
    """Mock pins; MockPWMPin so the buzzer and the RGB LED can do PWM (and tests can read it)."""
    return MockFactory(pin_class=MockPWMPin)


def choose_pin_factory(
    force_mock: bool = False,
    work_dir: Path | None = None,
    default_factory: Callable[[], Any] = Device._default_pin_factory,
) -> tuple[Any, str]:
    """The pin factory and its name ("lgpio", "rpigpio", ..., "mock"); logs one line saying which.

    `work_dir` is a writable folder for lgpio's notification pipes when the current directory is not
    writable (see `prepare_lgpio_dir`); the daemon passes the journal's folder.
    """
    if force_mock:
        log.info("GPIO: mock pins (asked for)")
        return mock_factory(), "mock"
    if os.environ.get("GPIOZERO_PIN_FACTORY", "").lower() == "mock":
        log.info("GPIO: mock pins (GPIOZERO_PIN_FACTORY=mock)")
        return mock_factory(), "mock"
    prepare_lgpio_dir(work_dir)
    # gpiozero warns once per factory it skips; gather those into the one line below instead.
    with warnings.catch_warnings(record=True) as skipped:
        warnings.simplefilter("always")
        try:
            factory = default_factory()
        except Exception as error:  # gpiozero raises several kinds when there is no real GPIO
            reasons = "; ".join(str(w.message) for w in skipped) or str(error)
            log.info("GPIO: no GPIO pins here, using mock pins (%s)", reasons)
            return mock_factory(), "mock"
    name = type(factory).__name__.removesuffix("Factory").lower()
    if skipped:  # e.g. lgpio failed and gpiozero fell back: say why, it is the first thing to fix
        log.info("GPIO: gpiozero's %s pins (%s)", name, "; ".join(str(w.message) for w in skipped))
    else:
        log.info("GPIO: gpiozero's %s pins", name)
    return factory, name


def prepare_lgpio_dir(
    work_dir: Path | None = None,
    environ: MutableMapping[str, str] = os.environ,
    cwd: Callable[[], str] = os.getcwd,
) -> str | None:
    """Give lgpio a writable working directory; return the one set in LG_WD, if any.

    lgpio (gpiozero's factory on a Pi 5) creates its notification pipes (.lgd-nfy*) in its working
    directory, and fails to import when that directory is not writable, as `/` is under systemd
    without WorkingDirectory=. Its C library reads LG_WD (and chdirs there) the first time it is
    loaded, so set LG_WD before gpiozero imports lgpio. A writable current directory is left alone.
    """
    if environ.get("LG_WD"):
        return environ["LG_WD"]
    if os.access(cwd(), os.W_OK):
        return None
    candidates = [
        work_dir,
        environ.get("RUNTIME_DIRECTORY", "").split(":")[0] or None,  # systemd RuntimeDirectory=
        environ.get("STATE_DIRECTORY", "").split(":")[0] or None,  # systemd StateDirectory=
        tempfile.gettempdir(),
    ]
    for candidate in candidates:
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK):
            environ["LG_WD"] = str(Path(candidate).resolve())
            log.info("GPIO: the working directory is read-only; lgpio works in %s", environ["LG_WD"])
            return environ["LG_WD"]
    return None
