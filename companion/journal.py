"""The journal: every accepted input, appended to SQLite and synced before anything is shown.

It is the truth: the table's state is the fold of its entries, so a restart, a crash or a power cut
resumes the exact game. Entries are never changed or deleted; an undo is itself an entry that takes
back the input before it (see `effective_events`).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from companion.wal import WalReport, inspect_wal

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    at    TEXT NOT NULL,
    event TEXT NOT NULL
)
"""

# Kept beside the entries, never folded into the game: each time opening the journal found a torn
# last write (see companion.wal), so `companion doctor` can report it after the daemon restarted.
RECOVERIES = """
CREATE TABLE IF NOT EXISTS recoveries (
    at     TEXT NOT NULL,
    detail TEXT NOT NULL
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

    def __init__(self, path: Path | str, read_only: bool = False) -> None:
        """Open (or create) the journal; `read_only` opens an existing one without writing anything,
        not even a checkpoint, for `companion doctor`."""
        self.path = str(path)
        memory = self.path == ":memory:"
        # A disk that went read-only (a failing SD card): the game is still shown, every input refused.
        read_only_disk = not memory and read_only_fs(self.path)
        self.read_only = read_only or read_only_disk
        self._lock = threading.Lock()
        # SQLite silently drops a torn write at the end of the WAL when it opens the file: look first.
        self.wal: WalReport | None = None if read_only or memory else inspect_wal(self.path)
        has_wal = not memory and Path(f"{self.path}-wal").exists()
        try:
            if read_only or (read_only_disk and not has_wal):
                # With no WAL left the database file holds every entry; on a read-only disk SQLite
                # cannot create its -shm file, so it must be told the file cannot change (immutable).
                mode = "ro&immutable=1" if read_only_disk and not has_wal else "ro"
                uri = f"{Path(self.path).resolve().as_uri()}?mode={mode}"
                self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
            else:
                if not memory:
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                self._db.execute("PRAGMA journal_mode=WAL")
                # FULL: a commit is on disk before append() returns, so nothing shown is ever lost.
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.execute(SCHEMA)
                if not self.read_only:
                    self._db.execute(RECOVERIES)
        except sqlite3.Error as error:
            raise JournalError(f"cannot open the journal {self.path}: {error}") from error
        if self.read_only and not read_only:
            from companion.systemd import sandbox_write_hint

            hint = sandbox_write_hint(self.path)  # not the disk: the service's sandbox
            if hint:
                log.warning("the journal %s is read-only for the service: %s", self.path, hint)
            else:
                log.warning("the journal %s is on a read-only disk: every input will be refused", self.path)
        if self.wal is not None and self.wal.torn:
            self._note_recovery(self.wal)
        elif self.wal is not None and self.wal.committed_frames:
            log.info("the journal was not closed cleanly (a crash or a power cut): nothing was lost")

    def _note_recovery(self, wal: WalReport) -> None:
        detail = wal.describe()
        try:
            last = self._db.execute("SELECT max(seq) FROM entries").fetchone()[0] or 0
            detail = f"{detail}; the last whole entry is {last}"
            log.warning("journal recovered after an unclean stop: %s", detail)
            at = datetime.now(UTC).isoformat(timespec="seconds")
            self._db.execute("INSERT INTO recoveries (at, detail) VALUES (?, ?)", (at, detail))
        except sqlite3.Error as error:  # a full or read-only disk: the log line must do
            log.warning("journal recovered (%s) but could not note it: %s", detail, error)

    def recoveries(self) -> list[tuple[str, str]]:
        """(time, what) of every torn write found when the journal was opened, oldest first."""
        with self._lock:
            try:
                rows = self._db.execute("SELECT at, detail FROM recoveries ORDER BY rowid").fetchall()
            except sqlite3.OperationalError:  # a journal from before recoveries were kept
                return []
        return [(str(at), str(detail)) for at, detail in rows]

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
            # Refuse rather than skip: folding the game without one of its inputs would show a
            # different game. Only an edit from outside the companion can cause this.
            try:
                event = json.loads(text)
            except ValueError as error:
                raise JournalError(
                    f"entry {seq} of the journal {self.path} is not valid JSON ({error}): it was changed "
                    "outside the companion; see 'Repairing the journal' in docs/operations.md"
                ) from error
            if not isinstance(event, dict):
                raise JournalError(
                    f"entry {seq} of the journal {self.path} is not an input object: it was changed "
                    "outside the companion; see 'Repairing the journal' in docs/operations.md"
                )
            yield Entry(seq, at, event)

    def check(self) -> str:
        """SQLite's own integrity check: "ok" or what is wrong."""
        with self._lock:
            return str(self._db.execute("PRAGMA quick_check").fetchone()[0])

    def tables(self) -> list[str]:
        """The tables in the journal's file (for `companion doctor`: is it a journal at all?)."""
        with self._lock:
            rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            return [str(name) for (name,) in rows.fetchall() if not str(name).startswith("sqlite_")]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def nearest_existing(path: Path | str) -> Path:
    """`path`, or its nearest ancestor that exists (where a file not made yet would go)."""
    found = Path(path).resolve()
    while not found.exists() and found != found.parent:
        found = found.parent
    return found


def read_only_fs(path: Path | str) -> bool:
    """Whether the filesystem that holds (or would hold) `path` is mounted read-only."""
    return bool(os.statvfs(nearest_existing(path)).f_flag & os.ST_RDONLY)


def effective_events(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The inputs still in force: each undo entry takes back the input before it."""
    return [entry.event for entry in effective_entries(Entry(0, "", event) for event in events)]


def effective_entries(entries: Iterable[Entry]) -> list[Entry]:
    """The entries whose inputs are still in force (see `effective_events`), oldest first."""
    stack: list[Entry] = []
    for entry in entries:
        if entry.event.get("type") == "undo":
            if stack:
                stack.pop()
        else:
            stack.append(entry)
    return stack
