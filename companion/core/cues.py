"""Cues: the moments players must notice. Engines and the table emit them; the feedback layer turns
them into LED and buzzer patterns and the scoreboard into banners, animations and sounds.

Every cue name used anywhere is listed here, so the feedback table and the web can cover them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CUE_NAMES: dict[str, str] = {
    # Table-wide
    "card-accepted": "a card or action was accepted",
    "error": "an input was refused (illegal play, wrong turn, malformed request)",
    "unknown-card": "a tag that is not a known card",
    "your-turn": "the prompt now asks a seat for something",
    "game-started": "a new game began",
    "undo": "the last input was taken back",
    "reader-lost": "the NFC reader stopped answering",
    "reader-back": "the NFC reader answers again",
    "round-won": "a round is over and has winners",
    "game-won": "the game is over and has winners",
    "player-eliminated": "a player is out",
    "card-revealed": "a hidden card is now shown face up",
    "power-off": "Next and Undo were held: the table shuts the Pi down",
    # Spy Team
    "trick-won": "a trick was won (seat = the winner)",
    "camouflage": "all four cards of a trick shared a colour",
    "mission-accomplished": "a team hit its targets exactly",
    "mission-sabotaged": "a player went over target; the rivals complete their mission",
    # SPY
    "spied": "a spied card answered with its type only",
    "bomb-lit": "an unlit bomb was spied: TSSSsss",
    "boom": "a lit bomb was spied: the spier is out",
    "already-exposed": "a spied card was already face up",
    # Mission for Peanuts
    "shuffle-in": "a card goes back into the deck: shuffle it in",
    "extra-turn": "the same player takes another turn",
    "family-found": "a player holds the Spy, the Telepath and the Assassin",
    "showdown": "the deck ran out: hands are compared",
}


@dataclass(frozen=True)
class Cue:
    """One thing to notice. `seat` is the seat it concerns (the trick winner, the eliminated player),
    `text` what the scoreboard announces, `data` any further public detail."""

    name: str
    seat: int | None = None
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name not in CUE_NAMES:
            raise ValueError(f"unknown cue name {self.name!r}: add it to companion.core.cues.CUE_NAMES")

    def to_json(self) -> dict[str, Any]:
        return {"cue": self.name, "seat": self.seat, "text": self.text, "data": dict(self.data)}


# How the pages present each cue. The scoreboard and the control page read this from GET /api/games
# (with the LED and buzzer pattern of companion.pins.feedback), so they keep no list of cue names of their
# own: a cue they know nothing about is simply not announced.

Note = dict[str, Any]
"""One part of a page's sound: {"hz", "at", "for", "wave", "gain"} or {"noise", "from", "to", ...}."""


def tone(hz: float, at: float, length: float, wave: str = "triangle", gain: float = 0.2) -> Note:
    """A note of `hz` starting `at` seconds in, `length` seconds long."""
    return {"hz": hz, "at": at, "for": length, "wave": wave, "gain": gain}


def run(*hz: float, step: float, length: float, wave: str = "triangle", gain: float = 0.2) -> list[Note]:
    """Notes one after the other, `step` seconds apart."""
    return [tone(f, i * step, length, wave, gain) for i, f in enumerate(hz)]


def hiss(length: float, start: float, end: float, gain: float, kind: str = "highpass") -> Note:
    """Filtered white noise whose filter sweeps from `start` to `end` Hz."""
    return {"noise": length, "from": start, "to": end, "gain": gain, "filter": kind}


@dataclass(frozen=True)
class CueStyle:
    """A cue on the pages. `kicker` is the word over a banner's sentence, `banner` whether it gets one,
    `rank` what to keep when not every banner can be shown in time (higher matters more; `minor` ones
    may be dropped, the board shows their outcome anyway), `hold` how long its banner stays in ms
    (alone, with another waiting), `role` a part it plays on the pages ("refusal": a refused input,
    shown briefly on the scoreboard and, on a control page, only as the answer to its own request;
    "reset": clears waiting banners; "reader-down"/"reader-up": the health pill), and
    `sound` what the page plays (empty: silent)."""

    banner: bool = False
    kicker: str = ""
    rank: int = 2
    minor: bool = False
    hold: tuple[int, int] = (2500, 1300)
    role: str = ""
    sound: tuple[Note, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "banner": self.banner,
            "kicker": self.kicker,
            "rank": 1 if self.minor and self.rank == 2 else self.rank,
            "minor": self.minor,
            "hold": list(self.hold),
            "role": self.role,
            "sound": list(self.sound),
        }


# How each cue looks and sounds on the pages: data, one row a cue (the pins' side is in
# companion.pins.patterns).
CUE_STYLES: dict[str, CueStyle] = {
    # Table-wide
    "card-accepted": CueStyle(sound=(tone(880, 0, 0.08),)),
    "error": CueStyle(
        True,
        "Refused",
        8,
        role="refusal",
        sound=(tone(247, 0, 0.15, "square", 0.12), tone(220, 0.2, 0.3, "square", 0.12)),
    ),
    "unknown-card": CueStyle(
        True,
        "Unknown card",
        8,
        role="refusal",
        sound=(
            tone(330, 0, 0.1, "square", 0.1),
            tone(330, 0.15, 0.1, "square", 0.1),
            tone(220, 0.3, 0.25, "square", 0.1),
        ),
    ),
    "your-turn": CueStyle(),
    "game-started": CueStyle(True, minor=True, role="reset"),
    "undo": CueStyle(
        True, "Undo", 7, role="reset", sound=tuple(run(660, 440, step=0.08, length=0.12, wave="sine"))
    ),
    "reader-lost": CueStyle(
        True,
        "Reader",
        8,
        role="reader-down",
        sound=tuple(run(440, 220, step=0.2, length=0.3, wave="square", gain=0.1)),
    ),
    "reader-back": CueStyle(True, minor=True, role="reader-up"),
    "round-won": CueStyle(
        True, "Round over", 5, hold=(4000, 2200), sound=tuple(run(523, 784, 1047, step=0.12, length=0.3))
    ),
    "game-won": CueStyle(
        True,
        "★ Game won ★",
        9,
        hold=(7000, 7000),
        sound=tuple(run(523, 523, 784, 880, 1047, step=0.15, length=0.5)),
    ),
    "player-eliminated": CueStyle(
        True, rank=5, sound=tuple(run(392, 330, 262, step=0.15, length=0.3, wave="square", gain=0.1))
    ),
    "card-revealed": CueStyle(True, minor=True, sound=tuple(run(660, 880, step=0.1, length=0.2))),
    "power-off": CueStyle(
        True, "Power off", 9, hold=(10000, 10000), sound=tuple(run(784, 523, 392, 262, step=0.3, length=0.3))
    ),
    # Spy Team
    "trick-won": CueStyle(
        True,
        "Trick",
        minor=True,
        hold=(2600, 1500),
        sound=tuple(run(523, 659, 784, step=0.1, length=0.2)),
    ),
    "camouflage": CueStyle(
        True,
        "Camouflage",
        minor=True,
        hold=(2600, 1800),
        sound=tuple(run(784, 659, 523, 392, step=0.08, length=0.2, wave="sine")),
    ),
    "mission-accomplished": CueStyle(
        True,
        "✓ Mission accomplished",
        6,
        hold=(4500, 3000),
        sound=tuple(run(523, 659, 784, 1047, step=0.12, length=0.4)),
    ),
    "mission-sabotaged": CueStyle(
        True,
        "✗ Sabotage",
        6,
        hold=(4500, 3000),
        sound=tuple(run(440, 392, 349, 262, step=0.15, length=0.4, wave="sawtooth", gain=0.1)),
    ),
    # SPY
    "spied": CueStyle(True, minor=True, sound=(tone(660, 0, 0.12, "sine"),)),
    "bomb-lit": CueStyle(True, rank=3, minor=True, sound=(hiss(1.5, 7000, 3000, 0.35),)),  # TSSSsss
    "boom": CueStyle(
        True,
        rank=6,
        hold=(4500, 2500),
        sound=(hiss(1.2, 800, 60, 0.9, "lowpass"), tone(60, 0, 0.8, "sine", 0.6)),
    ),
    "already-exposed": CueStyle(True, minor=True),
    # Mission for Peanuts
    "shuffle-in": CueStyle(True, minor=True, sound=(hiss(0.4, 3000, 1500, 0.15, "bandpass"),)),
    "extra-turn": CueStyle(True, minor=True, sound=tuple(run(660, 660, step=0.12, length=0.1))),
    "family-found": CueStyle(True, rank=6, sound=tuple(run(523, 659, 784, 1047, 1319, step=0.1, length=0.4))),
    "showdown": CueStyle(True, rank=5),
}
