"""What the journal holds: an entry (one accepted input), a keyed one with the answer it got, one game
of the history, and the fold of what is in force: an undo is itself an entry that takes back the
input before it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Entry:
    seq: int
    at: str
    event: dict[str, Any]
    key: str | None = None


@dataclass(frozen=True)
class Keyed:
    """A journaled input that carried an idempotency key, and the answer it got (None once archived)."""

    seq: int
    event: dict[str, Any]
    answer: dict[str, Any] | None


@dataclass(frozen=True)
class GameLog:
    """One game of the journal's history: its start and every input in force after it."""

    entries: list[Entry] = field(default_factory=list)

    @property
    def start(self) -> Entry:
        return self.entries[0]

    @property
    def game(self) -> str:
        return str(self.start.event.get("game"))

    @property
    def players(self) -> list[str]:
        players = self.start.event.get("players")
        return [str(name) for name in players] if isinstance(players, list) else []


def effective_entries(entries: Iterable[Entry]) -> list[Entry]:
    """The entries still in force: each undo entry takes back the input before it."""
    stack: list[Entry] = []
    for entry in entries:
        if entry.event.get("type") == "undo":
            if stack:
                stack.pop()
        else:
            stack.append(entry)
    return stack


def effective_events(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inputs still in force (see `effective_entries`)."""
    return [entry.event for entry in effective_entries(Entry(0, "", event) for event in events)]
