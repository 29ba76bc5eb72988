"""The table's own hardware on the GPIO pins: the pin factory, the pin map and the composite devices
built from it (`devices`), what each cue looks and sounds like (`patterns`), playing cues on the
buzzer and LEDs (`feedback`) and the seat buttons, Next and Undo (`buttons`).

Imports: companion.core, companion.games, companion.table.
"""

from companion._moved import forward

__getattr__ = forward(
    __name__, "companion.pins.devices"
)  # `from companion.pins import PinLayout`, before 0.2
