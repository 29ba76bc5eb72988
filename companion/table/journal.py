"""The journal: every accepted input, appended to SQLite and synced before anything is shown.

It is the truth: the table's state is the fold of its entries, so a restart, a crash or a power cut
resumes the exact game. An entry is never changed; an undo is itself an entry that takes back the
input before it (see `companion.table.entries`).

What the table needs is bounded by the current game, not by the journal's length:

- start-up reads the journal backwards from its end, only until the last start still in force
  (`game_in_force`); an undo past that start reads the game before it the same way, on demand;
- finished games are moved, oldest first, into an archive file beside the journal (`archive`,
  `<name>-archive.db`, same entries), so the live file holds about the current game. The two files
  are one log: `entries()` and `games()` read both, and the history stays readable.

An input may carry an idempotency key (a client's retry of a request whose answer it never got):
the key is kept with the entry, and the answer given to that request beside it, so a repeat is
answered from the journal, across restarts too.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Generator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from companion.table.disk import make_folder, read_only_fs, sandbox_write_hint, sync_directory
from companion.table.entries import Entry, GameLog, Keyed, effective_entries
from companion.table.schema import (
    JournalError as JournalError,  # the journal's errors, named here for its users
)
from companion.table.schema import (
    JournalSchemaError as JournalSchemaError,
)
from companion.table.schema import (
    create_archive_schema,
    create_schema,
    has_key_column,
)
from companion.table.wal import WalReport, inspect_wal

log = logging.getLogger(__name__)

ARCHIVE_BATCH = 1000  # entries moved per pair of transactions: the journal's lock is never held long


class Journal:
    """An append-only log of input events in one SQLite file (WAL, synchronous=FULL), with the
    finished games moved into an archive file beside it."""

    def __init__(self, path: Path | str, read_only: bool = False) -> None:
        """Open (or create) the journal; `read_only` opens an existing one without writing anything,
        not even a checkpoint, for `companion doctor`."""
        self.path = str(path)
        self.memory = self.path == ":memory:"
        self.archive_path = None if self.memory else archive_path(Path(self.path))
        # A disk that went read-only (a failing SD card): the game is still shown, every input refused.
        read_only_disk = not self.memory and read_only_fs(self.path)
        self.read_only = read_only or read_only_disk
        self._read_only_disk = read_only_disk
        self._lock = threading.Lock()
        self._archive: sqlite3.Connection | None = None
        self.rows_read = 0  # entries parsed by the fold's reads: bounded by the current game
        # SQLite silently drops a torn write at the end of the WAL when it opens the file: look first.
        self.wal: WalReport | None = None if read_only or self.memory else inspect_wal(self.path)
        created = not self.memory and not Path(self.path).exists()
        self._db = self._connect(self.path, read_only, create=create_schema)
        if created and not self.read_only:
            sync_directory(Path(self.path).parent)  # the new file's name is on disk too
        self._has_key = has_key_column(self._db, self.path, self.read_only)
        # Checked once at start-up (`verify`) and in doctor; /healthz and the watchdog read this
        # answer, never the disk.
        self.integrity = "not checked"
        if self.read_only and not read_only:
            _say_why_read_only(self.path)
        if self.wal is not None:
            self._report_wal(self.wal)

    # Opening

    def _report_wal(self, wal: WalReport) -> None:
        """What the WAL left at opening says about the last stop: a torn write (kept for doctor), a
        crash that lost nothing, or a clean stop."""
        if wal.torn:
            self._note_recovery(wal)
        elif wal.committed_frames:
            log.info("the journal was not closed cleanly (a crash or a power cut): nothing was lost")

    def _connect(self, path: str, read_only: bool, create: Any) -> sqlite3.Connection:
        """A connection to `path`; writable ones are WAL, synchronous=FULL, with `create` run."""
        memory = path == ":memory:"
        has_wal = not memory and Path(f"{path}-wal").exists()
        try:
            if read_only or (self._read_only_disk and not has_wal):
                # With no WAL left the database file holds every entry; on a read-only disk SQLite
                # cannot create its -shm file, so it must be told the file cannot change (immutable).
                mode = "ro&immutable=1" if self._read_only_disk and not has_wal else "ro"
                uri = f"{Path(path).resolve().as_uri()}?mode={mode}"
                return sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
            if not memory:
                make_folder(Path(path).parent)
            new = memory or not Path(path).exists()
            db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            if new:  # freed pages go back to the file system after an archive (set before any table)
                db.execute("PRAGMA auto_vacuum=INCREMENTAL")
            db.execute("PRAGMA journal_mode=WAL")
            # FULL: a commit is on disk before append() returns, so nothing shown is ever lost.
            db.execute("PRAGMA synchronous=FULL")
            try:
                create(db, path, writable=not self.read_only)
            except JournalSchemaError:
                db.close()
                raise
            return db
        except sqlite3.Error as error:
            raise JournalError(f"cannot open the journal {path}: {error}") from error

    def verify(self) -> str:
        """Run SQLite's quick check of the live file once and keep the verdict in `integrity`. It
        reads the whole file: the daemon calls it at start-up, after the table has moved finished
        games to the archive, so it costs about one game's worth of pages."""
        with self._lock:
            self.integrity = self._quick_check()
        return self.integrity

    def _quick_check(self) -> str:
        try:
            return str(self._db.execute("PRAGMA quick_check").fetchone()[0])
        except sqlite3.Error as error:
            return str(error)

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

    def _archive_db(self, create: bool) -> sqlite3.Connection | None:
        """The archive's connection, opened on first use; None if there is none (and not `create`)."""
        if self._archive is None and self.archive_path is not None:
            if not self.archive_path.exists() and not create:
                return None
            created = not self.archive_path.exists()
            self._archive = self._connect(
                str(self.archive_path), self.read_only, create=create_archive_schema
            )
            if created:
                sync_directory(self.archive_path.parent)
            has_key_column(self._archive, str(self.archive_path), self.read_only)
        return self._archive

    # Writing

    def append(
        self, event: dict[str, Any], at: str, key: str | None = None, answer: dict[str, Any] | None = None
    ) -> int:
        """Write one event (with the idempotency key and the answer of the request that made it, if
        any) and return its sequence number; raises JournalError if it did not land."""
        text = _dumps(event)
        with self._lock:
            try:
                if key is None:
                    cursor = self._db.execute("INSERT INTO entries (at, event) VALUES (?, ?)", (at, text))
                    return int(cursor.lastrowid or 0)
                self._db.execute("BEGIN IMMEDIATE")  # the entry and its answer land together
                try:
                    insert = "INSERT INTO entries (at, event, key) VALUES (?, ?, ?)"
                    seq = int(self._db.execute(insert, (at, text, key)).lastrowid or 0)
                    body = _dumps(answer if answer is not None else {})
                    self._db.execute("INSERT INTO answers (seq, body) VALUES (?, ?)", (seq, body))
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                return seq
            except sqlite3.Error as error:
                raise JournalError(f"could not record the input: {error}") from error

    def archive(self, before: int) -> int:
        """Move the entries older than `before` into the archive file, oldest first; returns how many.

        Each batch is copied and synced into the archive, then deleted here: a crash in between
        leaves it in both files, which reads tell apart by its sequence number (the live file's copy
        wins) and the next archive finishes."""
        if self.memory or self.read_only:
            return 0
        moved = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT seq, at, event, key FROM entries WHERE seq < ? ORDER BY seq LIMIT ?",
                    (before, ARCHIVE_BATCH),
                ).fetchall()
                if not rows:
                    break
                try:
                    archive = self._archive_db(create=True)
                    assert archive is not None
                    with_transaction(
                        archive,
                        "INSERT OR REPLACE INTO entries (seq, at, event, key) VALUES (?, ?, ?, ?)",
                        rows,
                    )
                    last = rows[-1][0]
                    self._db.execute("BEGIN IMMEDIATE")
                    self._db.execute("DELETE FROM entries WHERE seq <= ?", (last,))
                    self._db.execute("DELETE FROM answers WHERE seq <= ?", (last,))
                    self._db.execute("COMMIT")
                except (sqlite3.Error, OSError, JournalError) as error:  # a full or failing disk: next game
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    log.warning("could not archive finished games (they stay in the journal): %s", error)
                    break
                moved += len(rows)
        if moved:
            with self._lock:
                self._shrink()
            log.info("archived %d entries of finished games into %s", moved, self.archive_path)
        return moved

    def _shrink(self) -> None:
        """Give the pages freed by an archive back to the file system."""
        try:
            if self._db.execute("PRAGMA auto_vacuum").fetchone()[0] == 0:
                # A journal from before archives: switch it over once (VACUUM copies only what is left).
                self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")
                self._db.execute("VACUUM")
            else:
                # executescript steps it to the end (execute frees one page per call)
                self._db.executescript("PRAGMA incremental_vacuum;")
        except sqlite3.Error as error:
            log.warning("could not shrink the journal after an archive: %s", error)

    # Reading

    def game_in_force(self, before: int | None = None) -> list[Entry]:
        """The inputs in force of the last game started before entry `before` (default: the end),
        its start first; reads backwards only as far as that start. [] if no game is in force."""
        with self._lock:
            pending = 0  # undos seen that still have to take back an input further back
            kept: list[Entry] = []
            rows = self._backwards(before)
            try:
                for entry in rows:
                    self.rows_read += 1
                    if entry.event.get("type") == "undo":
                        pending += 1
                    elif pending:
                        pending -= 1
                    else:
                        kept.append(entry)
                        if entry.event.get("type") == "start":
                            break
            finally:
                rows.close()  # ends the read statement: no snapshot is held open
        kept.reverse()
        return kept

    def keyed(self, key: str) -> Keyed | None:
        """The input journaled with this idempotency key, and the answer it got; None if none was. A
        journal that cannot be read (a failing disk) raises JournalError."""
        try:
            return self._keyed(key)
        except (sqlite3.Error, OSError) as error:
            raise JournalError(
                f"cannot look up an idempotency key in the journal {self.path}: {error}"
            ) from error

    def _keyed(self, key: str) -> Keyed | None:
        with self._lock:
            for db in self._dbs():
                if not self._has_key and db is self._db:
                    continue
                row = db.execute("SELECT seq, at, event, key FROM entries WHERE key = ?", (key,)).fetchone()
                if row is None:
                    continue
                entry = self._entry(row)
                answer = None
                if db is self._db:
                    found = db.execute("SELECT body FROM answers WHERE seq = ?", (entry.seq,)).fetchone()
                    answer = json.loads(found[0]) if found else None
                return Keyed(entry.seq, entry.event, answer)
        return None

    def entries(self) -> Iterator[Entry]:
        """Every entry of the log, archived ones included, oldest first."""
        with self._lock:
            rows = self._archived_rows("ORDER BY seq") + self._live_rows("ORDER BY seq")
        for row in rows:
            yield self._entry(row)

    def games(self) -> list[GameLog]:
        """The history: every game in force, oldest first, each with its inputs in force (a history
        page folds them with the game's engine). Reads the whole log: not for the table's own use."""
        games: list[GameLog] = []
        for entry in effective_entries(self.entries()):
            if entry.event.get("type") == "start":
                games.append(GameLog([entry]))
            elif games:
                games[-1].entries.append(entry)
        return games

    def size(self) -> dict[str, int]:
        """Bytes on disk and entries, of the live file and of the archive."""
        with self._lock:
            live = (
                self._db.execute("SELECT count(*) FROM entries").fetchone()[0] if self._has_entries() else 0
            )
            archive = self._archive_db(create=False)
            archived = archive.execute("SELECT count(*) FROM entries").fetchone()[0] if archive else 0
        return {
            "bytes": _file_bytes(Path(self.path)) if not self.memory else 0,
            "entries": int(live),
            "archive_bytes": _file_bytes(self.archive_path) if self.archive_path else 0,
            "archived_entries": int(archived),
        }

    def recoveries(self) -> list[tuple[str, str]]:
        """(time, what) of every torn write found when the journal was opened, oldest first."""
        with self._lock:
            try:
                rows = self._db.execute("SELECT at, detail FROM recoveries ORDER BY rowid").fetchall()
            except sqlite3.OperationalError:  # a journal from before recoveries were kept
                return []
        return [(str(at), str(detail)) for at, detail in rows]

    def check(self) -> str:
        """SQLite's own integrity check, now: "ok" or what is wrong. Reads the whole file: for doctor."""
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
            if self._archive is not None:
                self._archive.close()

    # Internals (called with the lock held)

    def _dbs(self) -> list[sqlite3.Connection]:
        archive = self._archive_db(create=False)
        return [self._db] if archive is None else [self._db, archive]

    def _has_entries(self) -> bool:
        found = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entries'")
        return found.fetchone() is not None

    def _live_rows(self, order: str, where: str = "", args: tuple[Any, ...] = ()) -> list[Any]:
        if not self._has_entries():
            return []  # a read-only file the daemon has not set up yet
        key = "key" if self._has_key else "NULL"
        return self._db.execute(f"SELECT seq, at, event, {key} FROM entries {where} {order}", args).fetchall()

    def _archived_rows(self, order: str, below: int | None = None) -> list[Any]:
        """The archive's entries older than the live file's first (a copy in both is the live one's)."""
        archive = self._archive_db(create=False)
        if archive is None:
            return []
        if below is None:
            below = self._live_first()
        return archive.execute(
            f"SELECT seq, at, event, key FROM entries WHERE seq < ? {order}", (below,)
        ).fetchall()

    def _live_first(self) -> int:
        if not self._has_entries():
            return 2**62
        first = self._db.execute("SELECT min(seq) FROM entries").fetchone()[0]
        return 2**62 if first is None else int(first)

    def _backwards(self, before: int | None) -> Generator[Entry, None, None]:
        """Entries newest first, from just before `before`: the live file, then the archive. Rows are
        stepped one at a time, so a reader that stops early has read only what it used."""
        limit = 2**62 if before is None else before
        key = "key" if self._has_key else "NULL"
        if self._has_entries():
            query = f"SELECT seq, at, event, {key} FROM entries WHERE seq < ? ORDER BY seq DESC"
            yield from self._stepped(self._db, query, limit)
        archive = self._archive_db(create=False)
        if archive is not None:
            query = "SELECT seq, at, event, key FROM entries WHERE seq < ? ORDER BY seq DESC"
            yield from self._stepped(archive, query, min(limit, self._live_first()))

    def _stepped(self, db: sqlite3.Connection, query: str, limit: int) -> Iterator[Entry]:
        cursor = db.execute(query, (limit,))
        try:
            for row in cursor:
                yield self._entry(row)
        finally:
            cursor.close()

    def _entry(self, row: Any) -> Entry:
        seq, at, text, key = row
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
        return Entry(int(seq), str(at), event, key)


def _say_why_read_only(path: str) -> None:
    hint = sandbox_write_hint(path)  # not the disk: the service's sandbox
    if hint:
        log.warning("the journal %s is read-only for the service: %s", path, hint)
    else:
        log.warning("the journal %s is on a read-only disk: every input will be refused", path)


def with_transaction(db: sqlite3.Connection, statement: str, rows: list[Any]) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany(statement, rows)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def archive_path(db: Path) -> Path:
    """Where the finished games of the journal `db` are kept: `journal.db` -> `journal-archive.db`."""
    return db.with_name(f"{db.stem}-archive{db.suffix}")


def _file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
