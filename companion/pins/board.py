"""Which board this is, and which gpiozero drives its pins.

A Raspberry Pi is known by its device tree (`MODEL_FILES`; the tests point it at a fake model
file). On a Pi whose `[pins]` wire anything, pins that cannot be opened are a failure, never a quiet
fallback to mock pins: `open_pins` logs the cause and the fix, the daemon then runs on mock pins
with `"gpio": "unavailable"` (so `/healthz` is not ok) and `companion doctor` FAILs. Anywhere else
(a laptop, CI) no GPIO still means mock pins, as before.

A known trap, so doctor names the gpiozero in use and where it comes from: gpiozero 2.0.1 as first
published on PyPI opens gpiochip4 on any Pi 5, but kernels from 6.6.45 number the header's chip
gpiochip0. Raspberry Pi OS's own python3-gpiozero carries the fix; the installer takes gpiozero and
lgpio from apt there, and the venv sees them (system site packages).
"""

from __future__ import annotations

import importlib.metadata
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpiozero import Device

from companion.pins.devices import NoGpio, PinLayout, choose_pin_factory, mock_factory

log = logging.getLogger(__name__)

# Where Linux shows the device tree's model ("Raspberry Pi 5 Model B Rev 1.0"), first found wins.
MODEL_FILES: tuple[Path, ...] = (Path("/proc/device-tree/model"), Path("/sys/firmware/devicetree/base/model"))
SYSTEM_PACKAGES = Path("/usr/lib/python3/dist-packages")  # Debian's python3-* packages

PINS_FIX = (
    "check that /dev/gpiochip0 exists and the service user is in its group (`ls -l /dev/gpiochip*`); "
    "on Raspberry Pi OS use its python3-gpiozero and python3-lgpio (`sudo apt install python3-gpiozero "
    "python3-lgpio`, then re-run systemd/install.sh, which lets the venv see them); to play without "
    "pins, run with --mock-pins or set every [pins] entry to false"
)


def board_model() -> str | None:
    """The device tree's model of this machine, or None (not a device-tree board: a PC)."""
    for path in MODEL_FILES:
        try:
            return path.read_text(errors="replace").strip("\x00\n ")
        except OSError:
            continue
    return None


def is_raspberry_pi() -> bool:
    return "Raspberry Pi" in (board_model() or "")


@dataclass(frozen=True)
class Gpiozero:
    """The gpiozero this process imports: its version, its folder, and where it came from."""

    version: str
    path: Path
    origin: str  # "venv": pip's copy in this venv; "apt": the system's python3-gpiozero; else "pip"

    def describe(self) -> str:
        where = {
            "venv": "pip's copy in the venv",
            "apt": "the system's python3-gpiozero (apt)",
        }.get(self.origin, "pip, outside the venv")
        return f"gpiozero {self.version} from {where} ({self.path})"


def gpiozero_in_use() -> Gpiozero:
    import gpiozero

    path = Path(gpiozero.__file__).resolve().parent
    # The first distribution on sys.path, the same search the import made.
    version = importlib.metadata.version("gpiozero")
    venv = Path(sys.prefix).resolve()
    if sys.prefix != sys.base_prefix and path.is_relative_to(venv):
        origin = "venv"
    elif path.is_relative_to(SYSTEM_PACKAGES):
        origin = "apt"
    else:
        origin = "pip"
    return Gpiozero(version, path, origin)


def factory_name(factory: Any, name: str) -> str:
    """The factory and, for lgpio, the chip it opened: "lgpio on /dev/gpiochip0"."""
    chip = getattr(factory, "chip", None)
    return f"{name} on /dev/gpiochip{chip}" if isinstance(chip, int) else name


def unavailable(reasons: str) -> str:
    """What the daemon and doctor say when a Pi's pins cannot be opened."""
    return (
        f"GPIO: this Raspberry Pi's pins cannot be opened ({reasons}) with {gpiozero_in_use().describe()}: "
        "the LEDs, buzzer and buttons do nothing"
    )


@dataclass(frozen=True)
class PinChoice:
    factory: Any
    name: str  # "lgpio", "rpigpio", ..., "mock", or "unavailable" (a Pi whose pins failed)
    error: str | None = None  # why, with the fix, when "unavailable"


def open_pins(
    layout: PinLayout,
    force_mock: bool = False,
    work_dir: Path | None = None,
    default_factory: Callable[[], Any] = Device._default_pin_factory,
) -> PinChoice:
    """The pins the daemon drives. On a Pi with a pin map a factory that fails is "unavailable"
    (logged as an error with the fix) on mock pins, so the game still plays from the tablet."""
    required = layout.uses_pins and is_raspberry_pi()
    try:
        factory, name = choose_pin_factory(force_mock, work_dir, default_factory, fallback=not required)
    except NoGpio as error:
        return fail_pins(str(error))
    return PinChoice(factory, name)


def fail_pins(reasons: str) -> PinChoice:
    """Mock pins that say they stand in for failed ones: the error is logged once, with the fix."""
    message = f"{unavailable(reasons)}; fix: {PINS_FIX}"
    log.error("%s", message)
    return PinChoice(mock_factory(), "unavailable", message)
