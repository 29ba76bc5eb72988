"""Feedback on the table: cues become LED and buzzer patterns, the prompt lights the seat LEDs.

Players look at the cards, not at a screen, so the table itself says whose turn it is (that seat's
LED), that a card was read (a blip), who won (the winner's LED blinks) and that a bomb is hissing.

`PATTERNS` is the one table of what every cue looks and sounds like (docs/feedback.md shows it). A
pattern is a tune, steps of (tone in Hz or None for silence, seconds), and lights, frames of (which
seat LEDs, status colour or None to leave it, seconds). Patterns play on one background thread, so a
card read never waits for a tune. Between patterns the LEDs show the *rest* state: the seat the prompt
asks, and a status colour (green ready, blue waiting for a choice, blinking amber reader lost).

The cues of one input come as a burst (a trick won, then whose turn it is): they play one after the
other. A cue of a later input cuts whatever is still playing and drops what was queued.

With an active buzzer (on/off only) every tune degrades to a beep rhythm; with the sound off, or in
the quiet hours of `[sound]`, the buzzer stays silent and the lights still play.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from datetime import time as clock_time
from typing import Any

from gpiozero import LED, RGBLED, Buzzer, TonalBuzzer
from gpiozero.tones import Tone

from companion.config import ConfigError
from companion.pins import pin_map

log = logging.getLogger(__name__)

Step = tuple[float | None, float]
"""One buzzer step: a tone in Hz (None: silence) and how long it lasts, in seconds."""
Colour = tuple[float, float, float]
Seats = str | int
"""Which seat LEDs a frame lights: "rest" (as between patterns), "target" (the cue's seats: the
winners, the eliminated player...), "all", "none", or one seat number (for chases)."""
Frame = tuple[Seats, Colour | None, float]
"""One stretch of lights: the seat LEDs, the status colour (None: leave it as it is), seconds."""

OFF: Colour = (0.0, 0.0, 0.0)
RED: Colour = (1.0, 0.0, 0.0)
GREEN: Colour = (0.0, 1.0, 0.0)
BLUE: Colour = (0.0, 0.0, 1.0)
AMBER: Colour = (1.0, 0.4, 0.0)
PURPLE: Colour = (0.6, 0.0, 1.0)
WHITE: Colour = (1.0, 1.0, 1.0)

# The passive buzzer plays A3..A7 (220-3520 Hz): a piezo is loudest in its upper range.
MID_TONE = Tone("A5")
OCTAVES = 2
# Cues closer together than this, with no new state between them, are one input's burst.
BURST_SECONDS = 0.25
# Buzzer steps shorter than this are noise (a hiss, a rumble); an active buzzer crackles for them.
NOISE_STEP = 0.03


@dataclass(frozen=True)
class Pattern:
    """How one cue looks and sounds. `sound` and `light` say it in words, for docs/feedback.md."""

    sound: str
    light: str
    tune: tuple[Step, ...] = ()
    lights: tuple[Frame, ...] = ()

    @property
    def silent(self) -> bool:
        return not self.tune and not self.lights

    @property
    def seconds(self) -> float:
        return max(sum(s for _, s in self.tune), sum(s for _, _, s in self.lights))


SILENT = Pattern(sound="silent", light="none")
"""For a cue the table should not announce on the pins (the scoreboard still shows it)."""


def notes(*steps: tuple[str | None, float]) -> tuple[Step, ...]:
    """A tune from note names ("C6") and rests (None), so tunes read like music."""
    return tuple((None if note is None else Tone(note).frequency, seconds) for note, seconds in steps)


def blink(seats: Seats, times: int, on: float, off: float, colour: Colour | None = None) -> tuple[Frame, ...]:
    """`seats` (and the status LED in `colour`, if given) on and off `times` times."""
    return ((seats, colour, on), ("none", None if colour is None else OFF, off)) * times


def flash(colour: Colour, times: int, on: float, off: float) -> tuple[Frame, ...]:
    """The status LED flashes `colour`; the seat LEDs stay as they are."""
    return (("rest", colour, on), ("rest", OFF, off)) * times


def chase(rounds: int, step: float, colour: Colour | None = None) -> tuple[Frame, ...]:
    """One seat LED after the other, round the table."""
    frames: list[Frame] = [(seat, colour, step) for _ in range(rounds) for seat in range(5)]
    return (*frames, ("none", None, step))


def noise(seconds: float, low: float, high: float, seed: int, fade_from: float = 1.0) -> tuple[Step, ...]:
    """Rapidly changing random tones, heard as noise rather than as a note. From `fade_from` (a
    fraction of `seconds`) on, more and more steps fall silent: the noise dies away ("TSSSsss").
    A fixed seed makes it the same every time, and testable."""
    rng = random.Random(seed)
    count = round(seconds / 0.012)
    steps: list[Step] = []
    for i in range(count):
        fade = max(0.0, (i / count - fade_from) / (1.0 - fade_from)) if fade_from < 1 else 0.0
        silent = rng.random() < 0.7 * fade
        steps.append((None if silent else rng.uniform(low, high), 0.012))
    return tuple(steps)


PATTERNS: dict[str, Pattern] = {
    "card-accepted": Pattern(
        "one short high blip",
        "status LED winks green",
        notes(("C7", 0.06)),
        (("rest", GREEN, 0.12),),
    ),
    "error": Pattern(
        "low two-tone buzz (A4, F4)",
        "status LED flashes red twice",
        notes(("A4", 0.15), (None, 0.05), ("F4", 0.3)),
        flash(RED, 2, 0.15, 0.1),
    ),
    "unknown-card": Pattern(
        "two blips and a low note",
        "status LED flickers red and blue",
        notes(("E5", 0.08), (None, 0.04), ("E5", 0.08), (None, 0.04), ("A4", 0.25)),
        (("rest", RED, 0.12), ("rest", BLUE, 0.12)) * 2,
    ),
    "your-turn": Pattern(
        "rising two-note call (G5, C6)",
        "that seat's LED blinks twice, then stays on",
        notes(("G5", 0.08), (None, 0.03), ("C6", 0.12)),
        blink("target", 2, 0.1, 0.08),
    ),
    "trick-won": Pattern(
        "rising arpeggio C6-E6-G6",
        "the winner's LED blinks three times",
        notes(("C6", 0.1), ("E6", 0.1), ("G6", 0.2)),
        blink("target", 3, 0.15, 0.1),
    ),
    "camouflage": Pattern(
        "falling run G6-E6-C6-G5",
        "the seat LEDs chase round the table, the status LED purple",
        notes(("G6", 0.08), ("E6", 0.08), ("C6", 0.08), ("G5", 0.2)),
        chase(1, 0.08, PURPLE),
    ),
    "mission-accomplished": Pattern(
        "fanfare C6-E6-G6-C7",
        "all seat LEDs and the status LED (green) blink twice",
        notes(("C6", 0.12), ("E6", 0.12), ("G6", 0.12), ("C7", 0.4)),
        blink("all", 2, 0.2, 0.15, GREEN),
    ),
    "mission-sabotaged": Pattern(
        "falling A5-F5-D5-A4",
        "the saboteur's LED and the status LED (red) blink slowly twice",
        notes(("A5", 0.15), ("F5", 0.15), ("D5", 0.15), ("A4", 0.45)),
        blink("target", 2, 0.3, 0.2, RED),
    ),
    "bomb-lit": Pattern(
        'the hiss "TSSSsss": 1.5 s of random tones (2-3.5 kHz) that thin out',
        "status LED flickers amber like a fuse",
        noise(1.5, 2000.0, 3500.0, seed=7, fade_from=0.4),
        flash(AMBER, 12, 0.06, 0.06),
    ),
    "boom": Pattern(
        "a crack, a low rumble of random tones, a long A3",
        "all seat LEDs flash twice, the status LED white, then red",
        notes(("C7", 0.03)) + noise(0.6, 220.0, 330.0, seed=11) + notes(("A3", 0.3)),
        (("all", WHITE, 0.1), ("none", RED, 0.15), ("all", RED, 0.15), ("none", OFF, 0.15)),
    ),
    "card-revealed": Pattern(
        'a bright "ta-da" (E6, B6)',
        "the owner's LED blinks twice, slowly",
        notes(("E6", 0.08), (None, 0.03), ("B6", 0.2)),
        blink("target", 2, 0.3, 0.1),
    ),
    "player-eliminated": Pattern(
        "falling G5-E5-C5-G4",
        "that player's LED and the status LED (red) blink three times",
        notes(("G5", 0.15), ("E5", 0.15), ("C5", 0.15), ("G4", 0.35)),
        blink("target", 3, 0.2, 0.15, RED),
    ),
    "round-won": Pattern(
        "rising G5-C6-E6-G6, then E6-G6",
        "the winners' LEDs and the status LED (green) blink four times",
        notes(("G5", 0.1), ("C6", 0.1), ("E6", 0.1), ("G6", 0.1), (None, 0.05), ("E6", 0.1), ("G6", 0.35)),
        blink("target", 4, 0.15, 0.1, GREEN),
    ),
    "game-won": Pattern(
        'fanfare "ta-ta-ta-taaa, ta-taaa" (G5 G5 G5 C6, G5 C6)',
        "the winners' LEDs blink six times, the status LED green; they stay lit",
        notes(*[("G5", 0.12), (None, 0.03)] * 3, ("C6", 0.25), (None, 0.05), ("G5", 0.12), ("C6", 0.6)),
        blink("target", 6, 0.15, 0.1, GREEN),
    ),
    "reader-lost": Pattern(
        "two low falling beeps (E5, A4)",
        "status LED blinks amber until the reader is back",
        notes(("E5", 0.2), (None, 0.1), ("A4", 0.4)),
    ),
    "reader-back": Pattern(
        "rising two-note blip (A5, E6)",
        "status LED back to steady green",
        notes(("A5", 0.08), ("E6", 0.15)),
        (("rest", GREEN, 0.25),),
    ),
    "spied": Pattern(
        "short double blip (A6)",
        "the owner's LED winks",
        notes(("A6", 0.05), (None, 0.05), ("A6", 0.05)),
        (("target", None, 0.15),),
    ),
    "already-exposed": Pattern(
        "one flat mid beep (E5)",
        "status LED winks blue",
        notes(("E5", 0.12)),
        (("rest", BLUE, 0.15),),
    ),
    "shuffle-in": Pattern(
        "a quick trill C7-G6 (riffling cards)",
        "status LED flickers blue",
        notes(*[("C7", 0.04), ("G6", 0.04)] * 5),
        flash(BLUE, 4, 0.05, 0.05),
    ),
    "extra-turn": Pattern(
        "your-turn call with an extra note (G5, C6, C6)",
        "that seat's LED blinks three times quickly, then stays on",
        notes(("G5", 0.08), (None, 0.03), ("C6", 0.08), (None, 0.03), ("C6", 0.12)),
        blink("target", 3, 0.08, 0.08),
    ),
    "family-found": Pattern(
        "rising C6-E6-G6, then G6-C7",
        "the finder's LED and the status LED (purple) blink three times",
        notes(("C6", 0.1), ("E6", 0.1), ("G6", 0.1), (None, 0.05), ("G6", 0.1), ("C7", 0.3)),
        blink("target", 3, 0.15, 0.1, PURPLE),
    ),
    "showdown": Pattern(
        "a drum roll on G5, then C6",
        "the seat LEDs chase round the table twice",
        notes(*[("G5", 0.03), (None, 0.03)] * 8, ("C6", 0.3)),
        chase(2, 0.07),
    ),
    "game-started": Pattern(
        "rising scale C5-E5-G5-C6",
        "the seat LEDs light one after the other",
        notes(("C5", 0.08), ("E5", 0.08), ("G5", 0.08), ("C6", 0.2)),
        chase(1, 0.1),
    ),
    "undo": Pattern(
        "falling blip (C6, G5)",
        "status LED winks blue",
        notes(("C6", 0.05), ("G5", 0.08)),
        (("rest", BLUE, 0.15),),
    ),
}


def beeps(tune: Iterable[Step]) -> list[tuple[bool, float]]:
    """A tune as an active buzzer can play it (on or off): each note a beep with a short gap after
    it so repeated notes stay apart, and noise steps as a crackle (alternately on and off)."""
    out: list[tuple[bool, float]] = []
    for index, (tone, seconds) in enumerate(tune):
        if tone is None:
            out.append((False, seconds))
        elif seconds < NOISE_STEP:
            out.append((index % 2 == 0, seconds))
        else:
            gap = min(0.03, seconds / 4)
            out += [(True, seconds - gap), (False, gap)]
    merged: list[tuple[bool, float]] = []
    for on, seconds in out:
        if merged and merged[-1][0] == on:
            merged[-1] = (on, merged[-1][1] + seconds)
        else:
            merged.append((on, seconds))
    return merged


@dataclass(frozen=True)
class Sound:
    """The `[sound]` table: `enabled` (false: volume off) and `quiet_hours` ("22:00-08:00")."""

    enabled: bool = True
    quiet_hours: tuple[clock_time, clock_time] | None = None

    @classmethod
    def from_config(cls, sound: Mapping[str, Any] | None) -> Sound:
        sound = dict(sound or {})
        unknown = sorted(set(sound) - {"enabled", "quiet_hours"})
        if unknown:
            raise ConfigError(f"[sound] has unknown keys: {', '.join(unknown)} (see docs/feedback.md)")
        enabled = sound.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ConfigError(f"[sound] enabled must be true or false, not {enabled!r}")
        hours = sound.get("quiet_hours", "")
        if not isinstance(hours, str):
            raise ConfigError(f'[sound] quiet_hours must be a string like "22:00-08:00", not {hours!r}')
        if not hours.strip():
            return cls(enabled, None)
        try:
            start, end = (clock_time.fromisoformat(part.strip()) for part in hours.split("-"))
        except ValueError:
            raise ConfigError(f'[sound] quiet_hours must look like "22:00-08:00", not {hours!r}') from None
        return cls(enabled, (start, end))

    def audible(self, now: datetime) -> bool:
        if not self.enabled:
            return False
        if self.quiet_hours is None:
            return True
        start, end = self.quiet_hours
        moment = now.time()
        # A span such as 22:00-08:00 runs over midnight.
        quiet = start <= moment < end if start <= end else (moment >= start or moment < end)
        return not quiet


@dataclass(frozen=True)
class Rest:
    """What the LEDs show between patterns."""

    seats: frozenset[int] = frozenset()
    status: Colour | str = GREEN  # a colour, or "lost" for the blinking amber of a lost reader


def rest_of(view: Mapping[str, Any] | None, reader_lost: bool = False) -> Rest:
    """The resting lights for a public view: the prompt's seat lit (the winners once the game is
    over); status blinking amber if the reader is lost, blue when the table waits for a choice (a
    prompt with actions and no card to tap), green otherwise."""
    view = view or {}
    prompt = view.get("prompt") or {}
    seats: set[int] = set()
    if isinstance(prompt.get("seat"), int):
        seats.add(prompt["seat"])
    if view.get("status") == "game-over":
        seats.update(seat for seat in view.get("winners") or [] if isinstance(seat, int))
    if reader_lost:
        status: Colour | str = "lost"
    elif prompt.get("actions") and not prompt.get("tap"):
        status = BLUE
    else:
        status = GREEN
    return Rest(frozenset(seats), status)


def targets_of(cue: Mapping[str, Any]) -> frozenset[int]:
    """The seats a cue concerns: its data's "winners" if it names them, else its seat."""
    data = cue.get("data") or {}
    winners = data.get("winners")
    if isinstance(winners, list) and all(isinstance(seat, int) for seat in winners):
        return frozenset(winners)
    seat = cue.get("seat")
    return frozenset([seat]) if isinstance(seat, int) and not isinstance(seat, bool) else frozenset()


@dataclass
class _Request:
    name: str
    pattern: Pattern
    targets: frozenset[int]
    audible: bool = True


class Feedback:
    """A table listener that drives the seat LEDs, the status RGB LED and the buzzer.

    `pins` and `sound` are the config's `[pins]` and `[sound]` tables; `clock` tells the time of day
    for the quiet hours.
    """

    def __init__(
        self,
        pins: Mapping[str, Any] | None = None,
        sound: Mapping[str, Any] | None = None,
        pin_factory: Any = None,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        layout = pin_map(pins)
        self.sound = Sound.from_config(sound)
        self.clock = clock
        self.active_buzzer = layout["buzzer_type"] == "active"
        self.seat_leds: list[LED] = []
        self.status_led: RGBLED | None = None
        self.buzzer: TonalBuzzer | Buzzer | None = None
        try:
            for pin in layout["seat_leds"]:  # one by one, so a failure closes the ones made
                self.seat_leds.append(LED(pin, pin_factory=pin_factory))
            if layout["status_led"]:
                self.status_led = RGBLED(
                    *layout["status_led"],
                    active_high=not layout["status_common_anode"],
                    pin_factory=pin_factory,
                )
            if layout["buzzer"] is not None:
                self.buzzer = (
                    Buzzer(layout["buzzer"], pin_factory=pin_factory)
                    if self.active_buzzer
                    else TonalBuzzer(
                        layout["buzzer"], mid_tone=MID_TONE, octaves=OCTAVES, pin_factory=pin_factory
                    )
                )
        except Exception:
            self._close_devices()
            raise
        self._cond = threading.Condition()
        self._queue: deque[_Request] = deque()
        self._view: Mapping[str, Any] | None = None
        self._reader_lost = False
        self._rest_dirty = True
        self._busy = False
        self._cut = False
        self._closed = False
        self._last_cue = -BURST_SECONDS
        self._state_since_cue = True
        self._status_shown: Colour | str | None = None  # so a blink is not restarted needlessly
        self._worker = threading.Thread(target=self._run, name="feedback", daemon=True)
        self._worker.start()

    # The listener

    def __call__(self, kind: str, payload: Mapping[str, Any]) -> None:
        if kind == "state":
            with self._cond:
                self._view = payload
                self._state_since_cue = True
                self._rest_dirty = True
                self._cond.notify_all()
        elif kind == "cue":
            self.cue(payload)

    def cue(self, cue: Mapping[str, Any]) -> None:
        """Play one cue (JSON as the table sends it): queued behind its burst, or cutting in."""
        name = cue.get("cue")
        if not isinstance(name, str) or name not in PATTERNS:
            log.warning("no feedback pattern for cue %r", name)
            return
        pattern = PATTERNS[name]
        with self._cond:
            if name in ("reader-lost", "reader-back"):
                self._reader_lost = name == "reader-lost"
                self._rest_dirty = True
            now = time.monotonic()
            same_burst = not self._state_since_cue and now - self._last_cue < BURST_SECONDS
            self._last_cue, self._state_since_cue = now, False
            if not pattern.silent:
                if not same_burst:
                    self._queue.clear()
                    self._cut = self._busy
                audible = self.sound.audible(self.clock())
                self._queue.append(_Request(name, pattern, targets_of(cue), audible))
            self._cond.notify_all()

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until every queued pattern has played and the rest state is shown."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not (self._busy or self._queue or self._rest_dirty) or self._closed, timeout
            )

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._worker.join(timeout=2)
        self._close_devices()

    def _close_devices(self) -> None:
        for device in [*self.seat_leds, self.status_led, self.buzzer]:
            if device is not None:
                device.close()

    # The player thread: the only one that writes to the pins while running

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closed or bool(self._queue) or self._rest_dirty)
                if self._closed:
                    return
                request = self._queue.popleft() if self._queue else None
                self._busy, self._cut = request is not None, False
                rest = rest_of(self._view, self._reader_lost)
                self._rest_dirty = False
            try:
                if request is not None:
                    self._play(request, rest)
                    with self._cond:
                        rest = rest_of(self._view, self._reader_lost)
                        self._rest_dirty = False
                self._buzz(None)
                self._show(rest)
            except Exception:  # a pin that fails must not silence the table for good
                log.exception("feedback pattern failed")
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _play(self, request: _Request, rest: Rest) -> None:
        """Run one pattern on its timeline until it ends, is cut, or the feedback closes."""
        events: list[tuple[float, str, Any]] = []
        offset = 0.0
        if request.audible and self.buzzer is not None:
            steps: Iterable[tuple[Any, float]] = (
                beeps(request.pattern.tune) if self.active_buzzer else request.pattern.tune
            )
            for value, seconds in steps:
                events.append((offset, "buzz", value))
                offset += seconds
            events.append((offset, "buzz", None))
        offset = 0.0
        for seats, colour, seconds in request.pattern.lights:
            events.append((offset, "lights", (seats, colour)))
            offset += seconds
        if not request.pattern.lights:
            self._show(rest)
        events.append((request.pattern.seconds, "end", None))
        events.sort(key=lambda event: event[0])
        start = time.monotonic()
        for at, kind, value in events:
            with self._cond:
                remaining = start + at - time.monotonic()
                if self._cond.wait_for(lambda: self._cut or self._closed, timeout=max(0.0, remaining)):
                    return
            if kind == "buzz":
                self._buzz(value)
            elif kind == "lights":
                self._light(value[0], value[1], request.targets, rest)

    def _buzz(self, value: float | bool | None) -> None:
        if self.buzzer is None:
            return
        if isinstance(self.buzzer, TonalBuzzer):
            if value is None or value is False:
                self.buzzer.stop()
            else:
                low, high = self.buzzer.min_tone.frequency, self.buzzer.max_tone.frequency
                self.buzzer.play(min(max(float(value), low), high))
        else:
            self.buzzer.value = bool(value)

    def _light(self, seats: Seats, colour: Colour | None, targets: frozenset[int], rest: Rest) -> None:
        lit: Iterable[int]
        if seats == "rest":
            lit = rest.seats
        elif seats == "target":
            lit = targets
        elif seats == "all":
            lit = range(len(self.seat_leds))
        elif isinstance(seats, int):
            lit = [seats]
        else:
            lit = ()
        self._set_seats(frozenset(lit))
        if colour is not None:
            self._set_status(colour)

    def _show(self, rest: Rest) -> None:
        self._set_seats(rest.seats)
        self._set_status(rest.status)

    def _set_seats(self, lit: frozenset[int]) -> None:
        for seat, led in enumerate(self.seat_leds):
            if led.is_lit != (seat in lit):
                led.value = seat in lit

    def _set_status(self, status: Colour | str) -> None:
        if self.status_led is None or self._status_shown == status:
            return
        if status == "lost":
            self.status_led.blink(on_time=0.5, off_time=0.5, on_color=AMBER, off_color=OFF)
        else:
            self.status_led.value = status
        self._status_shown = status
