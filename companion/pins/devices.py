"""The pins: which gpiozero pin factory drives them, and which GPIO does what.

On a Raspberry Pi gpiozero picks its own factory (lgpio on a Pi 5 and on current Raspberry Pi OS),
and pins it cannot open there are an error, not mock pins (companion.pins.board); anywhere else the
companion falls back to gpiozero's mock pins, so the whole product runs on a laptop. One log line
says which.

The pin map is the `[pins]` table of the config, laid over `DEFAULT_PINS` (BCM numbers, see
`hardware/README.md`), parsed once into a `PinLayout`. A pin set to `false` (or an empty list) leaves
that part out of the build. `reader_pins` names the GPIOs a configured reader holds (14 and 15 for a
PN532 on the Pi's UART), so `PinLayout.parse(..., reserved=...)` can refuse a button or LED wired
onto them. From a layout, gpiozero style, come two composite devices: `TableOutputs` (seat LEDs,
status LED, buzzer; driven by companion.pins.feedback) and `TableInputs` (seat buttons, Next, Undo; read
by companion.pins.buttons).
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from gpiozero import LED, RGBLED, Button, Buzzer, CompositeDevice, Device, TonalBuzzer
from gpiozero.pins.mock import MockFactory, MockPWMPin
from gpiozero.tones import Tone

from companion.core.config import Config, ConfigError

log = logging.getLogger(__name__)

# BCM numbers. They keep clear of I2C (2, 3), SPI0 (7-11) and the UART (14, 15) that a PN532 reader
# uses. The buzzer's tones are software-timed PWM (lgpio's tx_pwm under gpiozero), which any GPIO can
# do: GPIO 18 is only where the wiring guide puts it.
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
    "power_off_hold": 5.0,  # seconds Next and Undo held together shut the Pi down (0: never)
    "power_off_command": ["systemctl", "poweroff"],  # run once the journal is closed
}

MAX_SEATS = 5
PIN_LISTS = ("seat_leds", "status_led", "seat_buttons")
PIN_SCALARS = ("buzzer", "next_button", "undo_button")

I2C1_PINS = (2, 3)  # GPIO 2 (SDA, header pin 3) and 3 (SCL, header pin 5): the Pi's I2C bus 1
# GPIO 11 (SCLK), 10 (MOSI), 9 (MISO), 8 (CE0) and 7 (CE1): the Pi's SPI0, both chip selects of which
# the kernel takes once SPI is on (dtparam=spi=on).
SPI0_PINS = (7, 8, 9, 10, 11)
# GPIO 4 (header pin 7): an RC522 board's RST, free in the default map; `reset_pin` moves it.
RC522_RESET_PIN = 4
UART_PINS = (14, 15)  # GPIO 14 (TXD, header pin 8) and 15 (RXD, header pin 10): the Pi's UART
# nfcpy paths of a serial port on GPIO 14/15: tty:AMA0 (the full UART; on a Pi 5 the only one there),
# tty:S0 (a Pi 3/4's mini UART), and the globs tty:AMA / tty:S that nfcpy widens to every ttyAMA* /
# ttyS*, those two included.
_UART_READER = re.compile(r"^tty:(AMA0?|S0?)(:|$)")
# Physical pin -> BCM GPIO on the 40-pin header, for gpiozero's "BOARD8" and "J8:8" pin names.
_HEADER = {3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24, 19: 10}
_HEADER |= {21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5, 31: 6, 32: 12, 33: 13, 35: 19}
_HEADER |= {36: 16, 37: 26, 38: 20, 40: 21}


def reader_pins(readers: Iterable[Mapping[str, Any]]) -> dict[int, str]:
    """The GPIOs the configured readers hold, each with why: 14 and 15 for a reader on the Pi's UART,
    2 and 3 (I2C bus 1) for a PN532 board on I2C, 7 to 11 (SPI0) for one on SPI, and for an RC522
    board SPI0 and its reset pin (GPIO 4 unless `reset_pin` says otherwise).

    `readers` is the config's reader tables (`Config.readers`). "auto" reserves nothing: it takes
    whichever reader answers, and a build that wires a button to GPIO 14 has no PN532 there.
    """
    held: dict[int, str] = {}
    for reader in readers:
        device = str(reader.get("device", ""))
        if _UART_READER.match(device):
            held |= dict.fromkeys(UART_PINS, f"the reader on the UART ({device})")
        elif device.lower() == "pn532:i2c1":
            held |= dict.fromkeys(I2C1_PINS, f"the reader on I2C bus 1 ({device})")
        elif device.lower() == "pn532:spi0.0":
            held |= dict.fromkeys(SPI0_PINS, f"the reader on SPI bus 0 ({device})")
        elif device.lower().startswith("rc522:"):
            held |= dict.fromkeys(SPI0_PINS, f"the reader on SPI bus 0 ({device})")
            held = _hold_reset_pin(held, reader, device)
    return held


def rc522_reset_pin(reader: Mapping[str, Any]) -> int:
    """The `reset_pin` of an `rc522:` reader entry (a BCM GPIO number), checked."""
    pin = reader.get("reset_pin", RC522_RESET_PIN)
    if isinstance(pin, bool) or not isinstance(pin, int) or not 2 <= pin <= 27:
        raise ConfigError(f"reader 'reset_pin' must be a BCM GPIO number from 2 to 27, not {pin!r}")
    return pin


def _hold_reset_pin(held: dict[int, str], reader: Mapping[str, Any], device: str) -> dict[int, str]:
    """`held` and the RC522's reset pin, which no other reader may take."""
    pin = rc522_reset_pin(reader)
    if pin in held:
        raise ConfigError(f"reader {device!r}: its reset_pin GPIO {pin} is already {held[pin]}")
    return held | {pin: f"the reset pin of the RC522 reader {device}"}


Pin = int | str
"""A GPIO as gpiozero takes it: a BCM number, or a name such as "GPIO17" or "BOARD11"."""


class BuzzerType(StrEnum):
    PASSIVE = "passive"  # tunes: gpiozero's TonalBuzzer (PWM)
    ACTIVE = "active"  # on/off beeps: gpiozero's Buzzer


@dataclass(frozen=True)
class PinLayout:
    """What is wired where: the config's `[pins]`, parsed and checked once (`parse`). A part left
    out of the build is an empty tuple or None."""

    seat_leds: tuple[Pin, ...]  # seat 0, 1, ...
    status_led: tuple[Pin, Pin, Pin] | None  # red, green, blue legs
    status_common_anode: bool
    buzzer: Pin | None
    buzzer_type: BuzzerType
    seat_buttons: tuple[Pin, ...]
    next_button: Pin | None
    undo_button: Pin | None
    undo_hold: float  # seconds Undo (and a seat button, for what needs a hold) must be held
    button_bounce: float  # seconds of contact bounce ignored
    power_off_hold: float = 5.0  # seconds Next and Undo held together shut down; 0: never
    power_off_command: tuple[str, ...] = ("systemctl", "poweroff")

    @property
    def uses_pins(self) -> bool:
        """Whether the layout wires anything at all (every pin `false`: nothing to open)."""
        singles = (self.buzzer, self.next_button, self.undo_button, self.status_led)
        return bool(self.seat_leds or self.seat_buttons or any(p is not None for p in singles))

    @classmethod
    def parse(
        cls, pins: Mapping[str, Any] | None = None, reserved: Mapping[int, str] | None = None
    ) -> PinLayout:
        """The config's `[pins]` over the defaults, checked: every pin used once, lists not too long,
        and none of the `reserved` GPIOs (BCM number -> what holds it, e.g. from `reader_pins`) in
        use. A wrong value is a ConfigError naming the key."""
        merged = _checked(pins, reserved)
        status = merged["status_led"]
        return cls(
            seat_leds=tuple(merged["seat_leds"]),
            status_led=(status[0], status[1], status[2]) if status else None,
            status_common_anode=bool(merged["status_common_anode"]),
            buzzer=merged["buzzer"],
            buzzer_type=BuzzerType(merged["buzzer_type"]),
            seat_buttons=tuple(merged["seat_buttons"]),
            next_button=merged["next_button"],
            undo_button=merged["undo_button"],
            undo_hold=float(merged["undo_hold"]),
            button_bounce=float(merged["button_bounce"]),
            power_off_hold=float(merged["power_off_hold"]),
            power_off_command=tuple(merged["power_off_command"]),
        )

    @classmethod
    def of(cls, config: Config) -> PinLayout:
        """The layout of a config: its `[pins]`, keeping clear of the GPIOs its readers hold."""
        return cls.parse(config.pins, reserved=reader_pins(config.readers))


def _checked(pins: Mapping[str, Any] | None, reserved: Mapping[int, str] | None) -> dict[str, Any]:
    """The merged `[pins]` table, every value checked: lists as lists (empty when left out), single
    pins as a pin or None (left out)."""
    merged: dict[str, Any] = {**DEFAULT_PINS, **(pins or {})}
    unknown = sorted(set(merged) - set(DEFAULT_PINS))
    if unknown:
        raise ConfigError(f"[pins] has unknown keys: {', '.join(unknown)} (see docs/feedback.md)")
    _normalise_pins(merged)
    _check_shapes(merged)
    _check_each_pin_once(merged, reserved or {})
    return merged


def _check_shapes(merged: Mapping[str, Any]) -> None:
    """How many seats and status pins, which buzzer, and the times in seconds."""
    if len(merged["seat_leds"]) > MAX_SEATS or len(merged["seat_buttons"]) > MAX_SEATS:
        raise ConfigError(f"[pins] has room for at most {MAX_SEATS} seats")
    if merged["status_led"] and len(merged["status_led"]) != 3:
        raise ConfigError("[pins] status_led must list 3 pins (red, green, blue), or be empty")
    if merged["buzzer_type"] not in tuple(BuzzerType):
        kind = merged["buzzer_type"]
        raise ConfigError(f'[pins] buzzer_type must be "passive" or "active", not {kind!r}')
    for key in ("undo_hold", "button_bounce", "power_off_hold"):
        if isinstance(merged[key], bool) or not isinstance(merged[key], int | float) or merged[key] < 0:
            raise ConfigError(f"[pins] {key} must be a number of seconds, not {merged[key]!r}")
    _check_command(merged["power_off_command"])


def _check_command(command: Any) -> None:
    """The power-off command: a program and its arguments, as a list (no shell)."""
    if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
        raise ConfigError(
            f'[pins] power_off_command must be a command as a list, e.g. ["systemctl", "poweroff"], '
            f"not {command!r}"
        )


def _normalise_pins(merged: dict[str, Any]) -> None:
    """Pin lists as lists (false: empty), single pins as a pin or None; refuse anything else."""
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


def _check_each_pin_once(merged: Mapping[str, Any], reserved: Mapping[int, str]) -> None:
    held = {str(pin): why for pin, why in reserved.items()}
    used: dict[str, str] = {}
    for key in (*PIN_LISTS, *PIN_SCALARS):
        value = merged[key]
        for pin in value if isinstance(value, list) else [value] if value is not None else []:
            name = _bcm_name(pin)
            if name in held:
                raise ConfigError(
                    f"[pins] {key} is on GPIO {name}, which {held[name]} uses: move it to a free GPIO "
                    "(see hardware/README.md), or the reader to USB"
                )
            if name in used:
                raise ConfigError(f"[pins] GPIO {pin} is used twice: by {used[name]} and by {key}")
            used[name] = key


def _bcm_name(pin: int | str) -> str:
    """The BCM number of a pin as text ("17" for 17, "GPIO17", "BCM17", "BOARD11" or "J8:11"); any
    other name gpiozero knows comes back as it is, upper-cased."""
    name = str(pin).upper().removeprefix("GPIO").removeprefix("BCM")
    for prefix in ("BOARD", "J8:"):
        number = name.removeprefix(prefix)
        if number != name and number.isdigit() and int(number) in _HEADER:
            return str(_HEADER[int(number)])
    return name


def _is_pin(value: Any) -> bool:
    # gpiozero also takes names such as "GPIO17" or "BOARD11"; pass those through.
    # A number is a BCM GPIO of the 40-pin header (0-27): gpiozero would refuse any other later.
    return (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 27) or (
        isinstance(value, str) and bool(value)
    )


# The passive buzzer plays A3..A7 (220-3520 Hz): a piezo is loudest in its upper range.
MID_TONE = Tone("A5")
OCTAVES = 2


# gpiozero ships no type hints: its classes are `Any` to mypy, hence the ignores on the subclasses.
class TableOutputs(CompositeDevice):  # type: ignore[misc]
    """The table's outputs as one gpiozero device: a LED per seat, the status RGB LED and the
    buzzer (None when the layout leaves it out); `close()` releases them all."""

    def __init__(self, layout: PinLayout, pin_factory: Any = None) -> None:
        made: list[Any] = []  # built one by one, so a pin that fails closes the ones made before it
        try:
            for pin in layout.seat_leds:
                made.append(LED(pin, pin_factory=pin_factory))
            self._seat_leds: list[LED] = list(made)
            self._status_led: RGBLED | None = None
            if layout.status_led is not None:
                active_high = not layout.status_common_anode
                self._status_led = RGBLED(
                    *layout.status_led, active_high=active_high, pin_factory=pin_factory
                )
                made.append(self._status_led)
            self._buzzer: TonalBuzzer | Buzzer | None = None
            if layout.buzzer is not None and layout.buzzer_type is BuzzerType.ACTIVE:
                self._buzzer = Buzzer(layout.buzzer, pin_factory=pin_factory)
            elif layout.buzzer is not None:
                self._buzzer = TonalBuzzer(
                    layout.buzzer, mid_tone=MID_TONE, octaves=OCTAVES, pin_factory=pin_factory
                )
            if self._buzzer is not None:
                made.append(self._buzzer)
        except Exception:
            for device in made:
                device.close()
            raise
        super().__init__(*made, pin_factory=pin_factory)

    @property
    def seat_leds(self) -> list[LED]:
        return self._seat_leds

    @property
    def status_led(self) -> RGBLED | None:
        return self._status_led

    @property
    def buzzer(self) -> TonalBuzzer | Buzzer | None:
        return self._buzzer


class TableInputs(CompositeDevice):  # type: ignore[misc]
    """The table's buttons as one gpiozero device: one per seat, Next and Undo (None when the layout
    leaves it out). Undo and the seat buttons report a hold after `layout.undo_hold` seconds."""

    def __init__(self, layout: PinLayout, pin_factory: Any = None) -> None:
        bounce = layout.button_bounce or None
        made: list[Any] = []
        try:
            for pin in layout.seat_buttons:
                # A seat button held as long as Undo confirms what a bump must not do (putting a player out).
                made.append(
                    Button(pin, bounce_time=bounce, hold_time=layout.undo_hold, pin_factory=pin_factory)
                )
            self._seat_buttons: list[Button] = list(made)
            self._next_button: Button | None = None
            if layout.next_button is not None:
                self._next_button = Button(layout.next_button, bounce_time=bounce, pin_factory=pin_factory)
                made.append(self._next_button)
            self._undo_button: Button | None = None
            if layout.undo_button is not None:
                self._undo_button = Button(
                    layout.undo_button,
                    bounce_time=bounce,
                    hold_time=layout.undo_hold,
                    pin_factory=pin_factory,
                )
                made.append(self._undo_button)
        except Exception:
            _close_side_by_side(made)
            raise
        super().__init__(*made, pin_factory=pin_factory)

    @property
    def seat_buttons(self) -> list[Button]:
        return self._seat_buttons

    @property
    def next_button(self) -> Button | None:
        return self._next_button

    @property
    def undo_button(self) -> Button | None:
        return self._undo_button

    def close(self) -> None:
        _close_side_by_side(list(self))
        super().close()  # they are closed already: this lets go of them


def _close_side_by_side(buttons: list[Any]) -> None:
    """Each gpiozero Button stops a hold thread that polls every 0.1 s: close them side by side
    rather than one after the other (the whole shutdown has about 2 s under systemd)."""
    closers = [threading.Thread(target=button.close) for button in buttons]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join()


def mock_factory() -> MockFactory:
    """Mock pins; MockPWMPin so the buzzer and the RGB LED can do PWM (and tests can read it)."""
    return MockFactory(pin_class=MockPWMPin)


class NoGpio(Exception):
    """gpiozero could open no pin factory; the message is why (each factory it tried)."""


def choose_pin_factory(
    force_mock: bool = False,
    work_dir: Path | None = None,
    default_factory: Callable[[], Any] = Device._default_pin_factory,
    fallback: bool = True,
) -> tuple[Any, str]:
    """The pin factory and its name ("lgpio", "rpigpio", ..., "mock"); logs one line saying which.

    `work_dir` is a writable folder for lgpio's notification pipes when the current directory is not
    writable (see `prepare_lgpio_dir`); the daemon passes the journal's folder. With `fallback`
    false (a Raspberry Pi with a pin map: companion.pins.board) a factory that cannot be opened is
    a `NoGpio`, not mock pins.
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
            if not fallback:
                raise NoGpio(reasons) from error
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
