"""Feedback on the table: cues become LED and buzzer patterns, the prompt lights the seat LEDs.

Players look at the cards, not at a screen, so the table itself says whose turn it is (that seat's
LED), that a card was read (a blip), who won (the winner's LED blinks) and that a bomb is hissing.

`companion.pins.patterns.PATTERNS` says what every cue looks and sounds like; this module plays them on
the `TableOutputs` of the pin layout (companion.pins.devices), on one background thread, so a card read
never waits for a tune. Between patterns the LEDs show the *rest* state: the seat the prompt
asks, and a status colour (green ready, blue waiting for a choice, blinking amber reader lost).

The cues of one input come as a burst (a trick won, then whose turn it is): they play one after the
other. A cue of a later input cuts whatever is still playing and drops what was queued.

The buzzer first: a cue that starts at once (not queued behind its burst) sets the buzzer's first
step on the caller's thread, the table's, right after the journal commit (`first_step`, which the
table calls before it computes the view or wakes a scoreboard); the worker plays the rest. Handing
the first step to the worker made it wait for that thread to win the GIL from the table and the
stream threads (docs/performance.md). The worker writes the pins only under the lock, and not once
a newer cue has cut in, so nothing it does overwrites that first step.

With an active buzzer (on/off only) every tune degrades to a beep rhythm; with the sound off, or in
the quiet hours of `[sound]`, the buzzer stays silent and the lights still play.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from datetime import time as clock_time
from enum import StrEnum
from typing import Any

from gpiozero import TonalBuzzer

from companion.core.config import ConfigError
from companion.core.cues import Cue
from companion.pins.devices import PinLayout, TableOutputs
from companion.pins.patterns import AMBER, BLUE, GREEN, OFF, PATTERNS, Colour, Lit, Pattern, Seats, Step

log = logging.getLogger(__name__)

# Cues closer together than this, with no new state between them, are one input's burst.
BURST_SECONDS = 0.25
# Buzzer steps shorter than this are noise (a hiss, a rumble); an active buzzer crackles for them.
NOISE_STEP = 0.03


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

    def audible(self, clock: Callable[[], datetime]) -> bool:
        """Whether the buzzer may sound now; `clock` is read only if there are quiet hours."""
        if not self.enabled:
            return False
        if self.quiet_hours is None:
            return True
        start, end = self.quiet_hours
        moment = clock().time()
        # A span such as 22:00-08:00 runs over midnight.
        quiet = start <= moment < end if start <= end else (moment >= start or moment < end)
        return not quiet


class Blink(StrEnum):
    """A status light that blinks by itself (gpiozero's own blink thread) rather than one colour."""

    READER_LOST = "lost"  # amber, on and off every half second, until the reader is back


@dataclass(frozen=True)
class Rest:
    """What the LEDs show between patterns."""

    seats: frozenset[int] = frozenset()
    status: Colour | Blink = GREEN


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
        status: Colour | Blink = Blink.READER_LOST
    elif prompt.get("actions") and not prompt.get("tap"):
        status = BLUE
    else:
        status = GREEN
    return Rest(frozenset(seats), status)


def targets_of(cue: Cue) -> frozenset[int]:
    """The seats a cue concerns: its data's "winners" if it names them, else its seat."""
    winners = cue.data.get("winners")
    if isinstance(winners, list) and all(isinstance(seat, int) for seat in winners):
        return frozenset(winners)
    return frozenset() if cue.seat is None else frozenset([cue.seat])


def first_tone(tune: tuple[Step, ...], active: bool) -> float | bool | None:
    """What the buzzer plays first for `tune`: its first tone (None: a rest), on/off for an active
    buzzer (as `beeps` would start)."""
    if not tune:
        return None
    return beeps(tune[:1])[0][0] if active else tune[0][0]


@dataclass
class _Request:
    name: str
    pattern: Pattern
    targets: frozenset[int]
    audible: bool = True
    started: float | None = None  # when its first buzzer step was played by `cue` (None: not yet)


class Feedback:
    """A table listener that drives the seat LEDs, the status RGB LED and the buzzer of `layout`.

    `sound` is the config's `[sound]` table; `clock` tells the time of day for the quiet hours.
    """

    def __init__(
        self,
        layout: PinLayout,
        sound: Mapping[str, Any] | None = None,
        pin_factory: Any = None,
        clock: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.sound = Sound.from_config(sound)
        self.clock = clock
        self.outputs = TableOutputs(layout, pin_factory=pin_factory)
        self.seat_leds = self.outputs.seat_leds
        self.status_led = self.outputs.status_led
        self.buzzer = self.outputs.buzzer
        self.active_buzzer = not isinstance(self.buzzer, TonalBuzzer)
        # The tonal buzzer's range, read once: gpiozero works it out in Tone arithmetic on every ask.
        self._tones = (
            (self.buzzer.min_tone.frequency, self.buzzer.max_tone.frequency)
            if isinstance(self.buzzer, TonalBuzzer)
            else (0.0, 0.0)
        )
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
        self._status_shown: Colour | Blink | None = None  # so a blink is not restarted needlessly
        self._early: Cue | None = None  # the cue `first_step` took, which the listener call repeats
        self._worker = threading.Thread(target=self._run, name="feedback", daemon=True)
        self._worker.start()

    # The listener

    def __call__(self, kind: str, payload: dict[str, Any] | Cue) -> None:
        if isinstance(payload, Cue):
            self.cue(payload)
        elif kind == "state":
            with self._cond:
                self._view = payload
                self._state_since_cue = True
                self._rest_dirty = True
                self._cond.notify_all()

    def first_step(self, cue: Cue) -> None:
        """Play `cue` now, its first buzzer step on this thread: the table calls it right after the
        journal commit, before the state and the cues go to the listeners. The listener call for
        this same cue that follows is then only the mark of its burst."""
        with self._cond:
            self._state_since_cue = True  # a new input (its state follows): a new burst
            self.cue(cue)
            self._early = cue

    def cue(self, cue: Cue) -> None:
        """Play one cue: queued behind its burst, or cutting in (its first buzzer step set here)."""
        name = cue.name
        pattern = PATTERNS.get(name)
        if pattern is None:
            log.warning("no feedback pattern for cue %r", name)
            return
        with self._cond:
            now = time.monotonic()
            if cue is self._early:  # already playing (`first_step`); its input's state came since
                self._early = None
                self._last_cue, self._state_since_cue = now, False
                return
            if name in ("reader-lost", "reader-back"):
                self._reader_lost = name == "reader-lost"
                self._rest_dirty = True
            same_burst = not self._state_since_cue and now - self._last_cue < BURST_SECONDS
            self._last_cue, self._state_since_cue = now, False
            if not pattern.silent:
                audible = self.sound.audible(self.clock)
                started = None
                if not same_burst:  # the buzzer's first step before anything else is done for it
                    started = self._start(pattern, audible)
                    self._queue.clear()
                self._queue.append(_Request(name, pattern, targets_of(cue), audible, started))
            self._cond.notify_all()

    def _start(self, pattern: Pattern, audible: bool) -> float:
        """Cut whatever plays and set the buzzer's first step of `pattern` (under the lock); when."""
        cutting, self._cut = self._busy, True  # the worker's job in hand is stale: it writes no more
        tone = first_tone(pattern.tune, self.active_buzzer) if audible else None
        if tone is not None or cutting:  # a silent start still silences the pattern it cuts
            try:
                self._buzz(tone)
            except Exception:  # a pin that fails must not refuse the input that was just journaled
                log.exception("feedback buzzer failed")
        return time.monotonic()

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
        self.outputs.close()

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
                    if not self._cut:  # else a newer cue has begun: its first step stays
                        if request is not None:  # the state may have moved on while it played
                            rest = rest_of(self._view, self._reader_lost)
                            self._rest_dirty = False
                        self._buzz(None)
                        self._show(rest)
            except Exception:  # a pin that fails must not silence the table for good
                log.exception("feedback pattern failed")
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _timeline(self, request: _Request) -> list[tuple[float, str, Any]]:
        """The pattern's pin changes, (seconds from its start, "buzz" or "lights", value), in order;
        without the first buzzer step when `cue` has played it already."""
        events: list[tuple[float, str, Any]] = []
        offset = 0.0
        if request.audible and self.buzzer is not None:
            steps: Iterable[tuple[Any, float]] = (
                beeps(request.pattern.tune) if self.active_buzzer else request.pattern.tune
            )
            for index, (value, seconds) in enumerate(steps):
                if index or request.started is None:
                    events.append((offset, "buzz", value))
                offset += seconds
            events.append((offset, "buzz", None))
        offset = 0.0
        for seats, colour, seconds in request.pattern.lights:
            events.append((offset, "lights", (seats, colour)))
            offset += seconds
        events.append((request.pattern.seconds, "end", None))
        events.sort(key=lambda event: event[0])
        return events

    def _play(self, request: _Request, rest: Rest) -> None:
        """Run one pattern on its timeline until it ends, is cut, or the feedback closes."""
        events = self._timeline(request)
        start = time.monotonic() if request.started is None else request.started
        with self._cond:
            if not request.pattern.lights and not self._cut:
                self._show(rest)
        for at, kind, value in events:
            with self._cond:  # pins are written under the lock: a cue that cuts in is never overwritten
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
            else:  # what TonalBuzzer.play does, without its range check in Tones: the range is known
                low, high = self._tones
                self.buzzer.pwm_device.pin.frequency = min(max(float(value), low), high)
                self.buzzer.pwm_device.value = 0.5
        else:
            self.buzzer.value = bool(value)

    def _light(self, seats: Seats, colour: Colour | None, targets: frozenset[int], rest: Rest) -> None:
        lit: Iterable[int]
        if seats is Lit.REST:
            lit = rest.seats
        elif seats is Lit.TARGET:
            lit = targets
        elif seats is Lit.ALL:
            lit = range(len(self.seat_leds))
        elif seats is Lit.NONE:
            lit = ()
        else:
            lit = [seats]
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

    def _set_status(self, status: Colour | Blink) -> None:
        if self.status_led is None or self._status_shown == status:
            return
        if status is Blink.READER_LOST:
            self.status_led.blink(on_time=0.5, off_time=0.5, on_color=AMBER, off_color=OFF)
        else:
            self.status_led.value = status
        self._status_shown = status
