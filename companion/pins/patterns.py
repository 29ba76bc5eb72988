"""What every cue looks and sounds like on the table: `PATTERNS`, one entry per cue name of
`companion.core.cues` (docs/feedback.md shows the table; a test keeps the two the same).

A pattern is data: a tune, steps of (tone in Hz or None for silence, seconds), and lights, frames of
(which seat LEDs, status colour or None to leave it, seconds). `companion.pins.feedback` plays them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from gpiozero.tones import Tone

Step = tuple[float | None, float]
"""One buzzer step: a tone in Hz (None: silence) and how long it lasts, in seconds."""
Colour = tuple[float, float, float]


class Lit(StrEnum):
    """Which seat LEDs a frame lights (or a seat number, for chases)."""

    REST = "rest"  # as between patterns: the seat the prompt asks
    TARGET = "target"  # the cue's seats: the winners, the eliminated player...
    ALL = "all"
    NONE = "none"


Seats = Lit | int
Frame = tuple[Seats, Colour | None, float]
"""One stretch of lights: the seat LEDs, the status colour (None: leave it as it is), seconds."""

OFF: Colour = (0.0, 0.0, 0.0)
RED: Colour = (1.0, 0.0, 0.0)
GREEN: Colour = (0.0, 1.0, 0.0)
BLUE: Colour = (0.0, 0.0, 1.0)
AMBER: Colour = (1.0, 0.4, 0.0)
PURPLE: Colour = (0.6, 0.0, 1.0)
WHITE: Colour = (1.0, 1.0, 1.0)


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
    return ((seats, colour, on), (Lit.NONE, None if colour is None else OFF, off)) * times


def flash(colour: Colour, times: int, on: float, off: float) -> tuple[Frame, ...]:
    """The status LED flashes `colour`; the seat LEDs stay as they are."""
    return ((Lit.REST, colour, on), (Lit.REST, OFF, off)) * times


def chase(rounds: int, step: float, colour: Colour | None = None) -> tuple[Frame, ...]:
    """One seat LED after the other, round the table."""
    frames: list[Frame] = [(seat, colour, step) for _ in range(rounds) for seat in range(5)]
    return (*frames, (Lit.NONE, None, step))


def noise(seconds: float, low: float, high: float, seed: int, fade_from: float = 1.0) -> tuple[Step, ...]:
    """A random pulse train, heard as noise: each step is a single cycle of a random tone between
    `low` and `high` Hz, so no pitch lasts long enough to be heard (bursts of many cycles, as
    before, made a piezo warble or chirp near its resonance). From `fade_from` (a fraction of
    `seconds`) on, more and more pulses fall silent: the noise dies away ("TSSSsss"). A fixed seed
    makes it the same every time, and testable."""
    rng = random.Random(seed)
    steps: list[Step] = []
    elapsed = 0.0
    while elapsed < seconds - 1e-9:
        tone = rng.uniform(low, high)
        length = min(1.0 / tone, seconds - elapsed)
        fade = max(0.0, (elapsed / seconds - fade_from) / (1.0 - fade_from)) if fade_from < 1 else 0.0
        steps.append((None if rng.random() < 0.7 * fade else tone, length))
        elapsed += length
    return tuple(steps)


PATTERNS: dict[str, Pattern] = {
    "card-accepted": Pattern(
        "one short high blip",
        "status LED winks green",
        notes(("C7", 0.06)),
        ((Lit.REST, GREEN, 0.12),),
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
        ((Lit.REST, RED, 0.12), (Lit.REST, BLUE, 0.12)) * 2,
    ),
    "your-turn": Pattern(
        "rising two-note call (G5, C6)",
        "that seat's LED blinks twice, then stays on",
        notes(("G5", 0.08), (None, 0.03), ("C6", 0.12)),
        blink(Lit.TARGET, 2, 0.1, 0.08),
    ),
    "trick-won": Pattern(
        "rising arpeggio C6-E6-G6",
        "the winner's LED blinks three times",
        notes(("C6", 0.1), ("E6", 0.1), ("G6", 0.2)),
        blink(Lit.TARGET, 3, 0.15, 0.1),
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
        blink(Lit.ALL, 2, 0.2, 0.15, GREEN),
    ),
    "mission-sabotaged": Pattern(
        "falling A5-F5-D5-A4",
        "the saboteur's LED and the status LED (red) blink slowly twice",
        notes(("A5", 0.15), ("F5", 0.15), ("D5", 0.15), ("A4", 0.45)),
        blink(Lit.TARGET, 2, 0.3, 0.2, RED),
    ),
    "bomb-lit": Pattern(
        'the hiss "TSSSsss": 1.5 s of random pulses (single cycles of 2-3.5 kHz) that thin out',
        "status LED flickers amber like a fuse",
        noise(1.5, 2000.0, 3500.0, seed=7, fade_from=0.4),
        flash(AMBER, 12, 0.06, 0.06),
    ),
    "boom": Pattern(
        "a crack, a low rumble of random pulses, a long A3",
        "all seat LEDs flash twice, the status LED white, then red",
        notes(("C7", 0.03)) + noise(0.6, 220.0, 330.0, seed=11) + notes(("A3", 0.3)),
        ((Lit.ALL, WHITE, 0.1), (Lit.NONE, RED, 0.15), (Lit.ALL, RED, 0.15), (Lit.NONE, OFF, 0.15)),
    ),
    "card-revealed": Pattern(
        'a bright "ta-da" (E6, B6)',
        "the owner's LED blinks twice, slowly",
        notes(("E6", 0.08), (None, 0.03), ("B6", 0.2)),
        blink(Lit.TARGET, 2, 0.3, 0.1),
    ),
    "player-eliminated": Pattern(
        "falling G5-E5-C5-G4",
        "that player's LED and the status LED (red) blink three times",
        notes(("G5", 0.15), ("E5", 0.15), ("C5", 0.15), ("G4", 0.35)),
        blink(Lit.TARGET, 3, 0.2, 0.15, RED),
    ),
    "round-won": Pattern(
        "rising G5-C6-E6-G6, then E6-G6",
        "the winners' LEDs and the status LED (green) blink four times",
        notes(("G5", 0.1), ("C6", 0.1), ("E6", 0.1), ("G6", 0.1), (None, 0.05), ("E6", 0.1), ("G6", 0.35)),
        blink(Lit.TARGET, 4, 0.15, 0.1, GREEN),
    ),
    "game-won": Pattern(
        'fanfare "ta-ta-ta-taaa, ta-taaa" (G5 G5 G5 C6, G5 C6)',
        "the winners' LEDs blink six times, the status LED green; they stay lit",
        notes(*[("G5", 0.12), (None, 0.03)] * 3, ("C6", 0.25), (None, 0.05), ("G5", 0.12), ("C6", 0.6)),
        blink(Lit.TARGET, 6, 0.15, 0.1, GREEN),
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
        ((Lit.REST, GREEN, 0.25),),
    ),
    "spied": Pattern(
        "short double blip (A6)",
        "the owner's LED winks",
        notes(("A6", 0.05), (None, 0.05), ("A6", 0.05)),
        ((Lit.TARGET, None, 0.15),),
    ),
    "already-exposed": Pattern(
        "one flat mid beep (E5)",
        "status LED winks blue",
        notes(("E5", 0.12)),
        ((Lit.REST, BLUE, 0.15),),
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
        blink(Lit.TARGET, 3, 0.08, 0.08),
    ),
    "family-found": Pattern(
        "rising C6-E6-G6, then G6-C7",
        "the finder's LED and the status LED (purple) blink three times",
        notes(("C6", 0.1), ("E6", 0.1), ("G6", 0.1), (None, 0.05), ("G6", 0.1), ("C7", 0.3)),
        blink(Lit.TARGET, 3, 0.15, 0.1, PURPLE),
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
        ((Lit.REST, BLUE, 0.15),),
    ),
    "power-off": Pattern(
        "four slow falling notes G5-C5-G4-C4",
        "all seat LEDs and the status LED (white) go out one step at a time",
        notes(("G5", 0.3), ("C5", 0.3), ("G4", 0.3), ("C4", 0.5)),
        ((Lit.ALL, WHITE, 0.4), (Lit.NONE, WHITE, 0.4), (Lit.NONE, AMBER, 0.4), (Lit.NONE, OFF, 0.2)),
    ),
}
