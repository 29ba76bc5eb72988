"""The journal's tables in SQLite: the entries (the same in the live file and the archive), the answers
kept for idempotent retries and the recoveries doctor reports; creating them, bringing a journal from
before idempotency keys up to date, and refusing a file that is not a journal."""

from __future__ import annotations

import sqlite3

ENTRY_COLUMNS = ("seq", "at", "event", "key")
ENTRIES = """
CREATE TABLE IF NOT EXISTS entries (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    at    TEXT NOT NULL,
    event TEXT NOT NULL,
    key   TEXT
)
"""
# The archive keeps the live file's sequence numbers: the two files are one log.
ARCHIVED_ENTRIES = ENTRIES.replace("AUTOINCREMENT", "")
KEYS = "CREATE UNIQUE INDEX IF NOT EXISTS entries_key ON entries (key) WHERE key IS NOT NULL"

# The answer a keyed input got (its public view), so a retry gets the same one. Only for the live
# file's entries: a retry comes seconds later, not after the game has been archived.
ANSWERS = """
CREATE TABLE IF NOT EXISTS answers (
    seq  INTEGER PRIMARY KEY,
    body TEXT NOT NULL
)
"""

# Kept beside the entries, never folded into the game: each time opening the journal found a torn
# last write (see companion.table.wal), so `companion doctor` can report it after the daemon restarted.
RECOVERIES = """
CREATE TABLE IF NOT EXISTS recoveries (
    at     TEXT NOT NULL,
    detail TEXT NOT NULL
)
"""


class JournalError(Exception):
    """The journal cannot be read or written; the message says what to do."""


class JournalSchemaError(JournalError):
    """The file is a SQLite database but not a journal the companion can use."""


def create_schema(db: sqlite3.Connection, path: str, writable: bool) -> None:
    """Create the journal's tables, or bring an older journal's up to date; refuse a foreign one."""
    db.execute(ENTRIES)
    has_key = has_key_column(db, path, read_only=False)  # before anything is added to the file
    if not writable:
        return
    if not has_key:  # a journal from before idempotency keys
        db.execute("ALTER TABLE entries ADD COLUMN key TEXT")
    db.execute(KEYS)
    db.execute(ANSWERS)
    db.execute(RECOVERIES)


def create_archive_schema(db: sqlite3.Connection, path: str, writable: bool) -> None:
    db.execute(ARCHIVED_ENTRIES)
    has_key_column(db, path, read_only=False)
    if writable:
        db.execute(KEYS)


def has_key_column(db: sqlite3.Connection, path: str, read_only: bool) -> bool:
    """Refuse a file whose entries table is not a journal's; True if it has the key column."""
    try:
        columns = tuple(str(row[1]) for row in db.execute("PRAGMA table_info(entries)"))
    except sqlite3.DatabaseError:
        if read_only:
            return False  # not a database at all: doctor's integrity check says so
        raise
    if columns in ((), ENTRY_COLUMNS, ENTRY_COLUMNS[:3]):
        return columns == ENTRY_COLUMNS
    raise JournalSchemaError(
        f"{path}: not a journal this version can use (its entries table has the columns "
        f"({', '.join(columns)}), a journal's are ({', '.join(ENTRY_COLUMNS)})): move it away to start "
        "a new one, or point [journal] path at the right file"
    )
