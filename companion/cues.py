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
            raise ValueError(f"unknown cue name {self.name!r}: add it to companion.cues.CUE_NAMES")

    def to_json(self) -> dict[str, Any]:
        return {"cue": self.name, "seat": self.seat, "text": self.text, "data": dict(self.data)}
