"""Which gpiozero pin factory drives the pins: the real one on a Pi, mock pins anywhere else."""

from __future__ import annotations

import logging

from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

log = logging.getLogger(__name__)


def choose_pin_factory(force_mock: bool = False) -> tuple[object, str]:
    """The pin factory and its name; logs one line saying which."""
    if not force_mock:
        try:
            factory = Device._default_pin_factory()
        except Exception as error:  # gpiozero raises several kinds when no real GPIO is present
            log.info("no GPIO here (%s): using mock pins", error.__class__.__name__)
        else:
            name = type(factory).__name__.replace("Factory", "").lower()
            log.info("GPIO through gpiozero's %s pins", name)
            return factory, name
    else:
        log.info("GPIO: mock pins (asked for)")
    # MockPWMPin so the buzzer can play tones and tests can read them back.
    return MockFactory(pin_class=MockPWMPin), "mock"
