"""The journal: every accepted input, appended to SQLite and synced before anything is shown.

It is the truth: the table's state is the fold of its entries, so a restart, a crash or a power cut
resumes the exact game. Entries are never changed or deleted; an undo is itself an entry that takes
back the input before it (see `effective_events`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    at    TEXT NOT NULL,
    event TEXT NOT NULL
)
"""


class JournalError(Exception):
    """The journal cannot be read or written; the message says what to do."""


@dataclass(frozen=True)
class Entry:
    seq: int
    at: str
    event: dict[str, Any]


class Journal:
    """An append-only log of input events in one SQLite file (WAL, synchronous=FULL)."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: a commit is on disk before append() returns, so nothing shown is ever lost.
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(SCHEMA)
        except sqlite3.Error as error:
            raise JournalError(f"cannot open the journal {self.path}: {error}") from error

    def append(self, event: dict[str, Any], at: str) -> int:
        """Write one event and return its sequence number; raises JournalError if it did not land."""
        text = json.dumps(event, separators=(",", ":"), sort_keys=True)
        with self._lock:
            try:
                cursor = self._db.execute("INSERT INTO entries (at, event) VALUES (?, ?)", (at, text))
            except sqlite3.Error as error:
                raise JournalError(f"could not record the input: {error}") from error
            return int(cursor.lastrowid or 0)

    def entries(self) -> Iterator[Entry]:
        with self._lock:
            rows = self._db.execute("SELECT seq, at, event FROM entries ORDER BY seq").fetchall()
        for seq, at, text in rows:
            yield Entry(seq, at, json.loads(text))

    def check(self) -> str:
        """SQLite's own integrity check: "ok" or what is wrong."""
        with self._lock:
            return str(self._db.execute("PRAGMA quick_check").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


def effective_events(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inputs still in force: each undo entry takes back the input before it."""
    stack: list[dict[str, Any]] = []
    for event in events:
        if event.get("type") == "undo":
            if stack:
                stack.pop()
        else:
            stack.append(event)
    return stack
