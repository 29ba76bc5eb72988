"""Feedback on the table: cues become buzzer patterns, the prompt lights the seat LEDs.

A pattern is a list of steps (a tone in Hz or None for silence, and how long it lasts). Patterns play
on one background thread, so a card read is never kept waiting, and a new cue cuts the one playing.
"""

from __future__ import annotations

import random
import threading
from typing import Any

from gpiozero import LED, TonalBuzzer

Step = tuple[float | None, float]

DEFAULT_PINS: dict[str, Any] = {"seat_leds": [5, 6, 13, 19, 26], "buzzer": 18}


def _hiss(seconds: float = 1.5, step: float = 0.012, seed: int = 7) -> list[Step]:
    """The lit bomb's "TSSSsss": rapidly changing random tones read as noise, not as a beep.
    A fixed seed keeps the pattern the same every time (and testable)."""
    rng = random.Random(seed)
    count = int(seconds / step)
    return [(rng.uniform(500.0, 880.0), step) for _ in range(count)]


PATTERNS: dict[str, list[Step]] = {
    "card-accepted": [(880.0, 0.05)],
    "error": [(247.0, 0.15), (None, 0.05), (220.0, 0.3)],
    "unknown-card": [(330.0, 0.1), (None, 0.05), (330.0, 0.1), (None, 0.05), (220.0, 0.25)],
    "trick-won": [(523.0, 0.1), (659.0, 0.1), (784.0, 0.2)],
    "camouflage": [(784.0, 0.08), (659.0, 0.08), (523.0, 0.08), (392.0, 0.2)],
    "mission-accomplished": [(523.0, 0.12), (659.0, 0.12), (784.0, 0.12), (880.0, 0.4)],
    "mission-sabotaged": [(440.0, 0.15), (392.0, 0.15), (349.0, 0.15), (262.0, 0.45)],
    "bomb-lit": _hiss(),
    "boom": [(262.0, 0.08), (233.0, 0.08), (220.0, 0.6)],
    "game-won": [(523.0, 0.15), (523.0, 0.15), (784.0, 0.15), (880.0, 0.6)],
}


class Feedback:
    """A table listener that drives the seat LEDs and the buzzer."""

    def __init__(self, pins: dict[str, Any] | None = None, pin_factory: Any = None) -> None:
        pins = {**DEFAULT_PINS, **(pins or {})}
        self.seat_leds = [LED(pin, pin_factory=pin_factory) for pin in pins["seat_leds"]]
        self.buzzer = TonalBuzzer(pins["buzzer"], pin_factory=pin_factory)
        self._next: list[Step] | None = None
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._closed = False
        self._worker = threading.Thread(target=self._play_loop, name="feedback", daemon=True)
        self._worker.start()

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "state":
            self.show_turn(payload.get("prompt", {}).get("seat"))
        elif kind == "cue" and payload.get("cue") in PATTERNS:
            self.play(PATTERNS[payload["cue"]])

    def show_turn(self, seat: int | None) -> None:
        for number, led in enumerate(self.seat_leds):
            led.value = number == seat

    def play(self, pattern: list[Step]) -> None:
        """Start `pattern` now, cutting whatever is playing."""
        with self._lock:
            self._next = pattern
            self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._worker.join(timeout=2)
        for device in [*self.seat_leds, self.buzzer]:
            device.close()

    def _play_loop(self) -> None:
        while True:
            self._wake.wait()
            with self._lock:
                pattern, self._next = self._next, None
                self._wake.clear()
            if self._closed:
                return
            for tone, seconds in pattern or []:
                if tone is None:
                    self.buzzer.stop()
                else:
                    self.buzzer.play(_clamp(self.buzzer, tone))
                if self._wake.wait(seconds):
                    break  # a newer cue (or close) cuts this pattern
            self.buzzer.stop()


def _clamp(buzzer: TonalBuzzer, tone: float) -> float:
    return min(max(tone, buzzer.min_tone.frequency), buzzer.max_tone.frequency)
