"""The table's own hardware on the GPIO pins: the pin factory, the pin map and the composite devices
built from it (`devices`), what each cue looks and sounds like (`patterns`), playing cues on the
buzzer and LEDs (`feedback`), the seat buttons, Next and Undo (`buttons`), and which board this is
and which gpiozero drives it, so a Raspberry Pi's pins never fall back to mock pins in silence (`board`).

Imports: companion.core, companion.games, companion.table.
"""

from companion._moved import forward

__getattr__ = forward(
    __name__, "companion.pins.devices"
)  # `from companion.pins import PinLayout`, before 0.2
