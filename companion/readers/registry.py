"""The card registry: which card each NFC tag belongs to, by the tag's UID.

A card is known first by the NDEF text record on its tag (the card id). The registry is for the tags
that carry none: read-only stickers, or tags not written yet. Enrollment registers the UID of every
tag it sees, written or not, so the registry also says which cards of a box have a tag at all.

It is its own SQLite file, `cards.db` next to the journal unless `[cards] path` says otherwise,
because a box of cards outlives any game: the journal may be thrown away (as `companion demo` does)
or moved, the enrolled box must stay. The daemon, the `companion cards` command and the tablet may
use it at the same time (WAL: one writer at a time, readers never blocked).

A registry the daemon cannot use (damaged, or on a disk gone read-only) does not stop the table: the
daemon runs with it read-only, or empty, says so once in its log, and every enrollment is refused
with the file's name and the cause (`Registry.problem`, `Registry.health()`); `check_registry` is
the same diagnosis for `companion doctor`.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from companion.core.config import Config
from companion.table.journal import JournalError

SCHEMA = """
CREATE TABLE IF NOT EXISTS tags (
    uid         TEXT PRIMARY KEY,   -- lower-case hex, no separators
    card        TEXT NOT NULL,      -- the card id, "game/card"
    ndef        INTEGER NOT NULL,   -- 1 if the tag also carries the card id as an NDEF text record
    enrolled_at TEXT NOT NULL
)
"""
TAG_COLUMNS = ["uid", "card", "ndef", "enrolled_at"]
EXPORT_VERSION = 1
log = logging.getLogger(__name__)
_UID = re.compile(r"^[0-9a-f]{8,20}$")  # 4 to 10 bytes: NFC-A UIDs, FeliCa IDm (8)


class RegistryError(JournalError):
    """The registry cannot be read or written; the message says what to do. A JournalError, so the
    command line reports it like any other database it cannot open."""


DAMAGED = ("SQLITE_NOTADB", "SQLITE_CORRUPT")  # SQLite's words for a file that is not (all) a database


def _damaged(error: BaseException | None) -> bool:
    return isinstance(error, SchemaError) or getattr(error, "sqlite_errorname", None) in DAMAGED


class SchemaError(Exception):
    """A registry file whose tables are not the ones this version writes."""


class RegistryConflict(Exception):
    """A tag already registered to another card (refused unless forced)."""

    def __init__(self, uid: str, card: str) -> None:
        super().__init__(f"tag {uid} is already registered to {card}")
        self.uid = uid
        self.card = card


@dataclass(frozen=True)
class TagEntry:
    uid: str
    card: str
    ndef: bool
    enrolled_at: str

    def to_json(self) -> dict[str, Any]:
        return {"uid": self.uid, "card": self.card, "ndef": self.ndef, "enrolled_at": self.enrolled_at}


def normalize_uid(uid: str) -> str:
    """`04:A2:2B:...`, `04a22b...` or `04 A2 2B ...` -> `04a22b...`; ValueError if it is not a UID."""
    if not isinstance(uid, str):
        raise ValueError("a tag UID must be a string of hex digits")
    text = re.sub(r"[\s:.-]", "", uid).lower()
    if not _UID.match(text) or len(text) % 2:
        raise ValueError(f"{uid!r} is not a tag UID (4 to 10 bytes in hex)")
    return text


def registry_path(config: Config) -> Path:
    """`[cards] path` of the config, else `cards.db` in the journal's folder."""
    configured = config.cards.get("path")
    if configured:
        return Path(configured)
    return Path(config.db).with_name("cards.db")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Registry:
    """UID -> card id, in one SQLite file. Thread-safe: the reader threads look up, the web enrolls.

    `problem`, when set, says why it cannot be written ("damaged: ...", "read-only: ..."): every
    write is then refused with it. A registry opened `read_only` on purpose has none."""

    def __init__(self, path: Path | str, *, read_only: bool = False) -> None:
        self.path = str(path)
        self.read_only = read_only
        self.problem: str | None = None
        self.stand_in = False  # True for `empty`: no file behind it, nothing to export
        self._lock = threading.Lock()
        self._changes = 0  # writes through this connection (`generation`)
        try:
            if read_only and self.path != ":memory:":
                # Without a WAL beside it the file holds everything; SQLite must be told it cannot
                # change, or it tries to create its -shm file (impossible on a read-only disk).
                wal = Path(f"{self.path}-wal").exists()
                uri = f"{Path(self.path).resolve().as_uri()}?mode={'ro' if wal else 'ro&immutable=1'}"
                self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
                self._check_schema()
                return
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=5)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # an enrolled tag must survive a power cut
            self._db.execute(SCHEMA)
            self._check_schema()
        except SchemaError as error:
            raise RegistryError(f"the card registry {self.path} is damaged ({error})") from error
        except (sqlite3.Error, OSError) as error:
            if _damaged(error):
                raise RegistryError(f"the card registry {self.path} is damaged ({error})") from error
            raise RegistryError(f"cannot open the card registry {self.path}: {error}") from error

    def _check_schema(self) -> None:
        """A file whose `tags` table is not ours (another program's, an old damaged copy) would
        answer every query with an error: refuse it at once, naming what is wrong."""
        columns = [row[1] for row in self._db.execute("PRAGMA table_info(tags)").fetchall()]
        if columns != TAG_COLUMNS:
            found = f"columns ({', '.join(columns)})" if columns else "no tags table"
            raise SchemaError(f"unexpected schema: {found}, not ({', '.join(TAG_COLUMNS)})")

    @classmethod
    def empty(cls, path: Path | str, problem: str | None = None) -> Registry:
        """No tag at all, read-only, in memory; named after `path` (a registry that does not exist
        yet, or one that cannot be used: `problem` says why)."""
        registry = cls(":memory:")
        registry.path, registry.read_only, registry.problem = str(path), True, problem
        registry.stand_in = True
        return registry

    @classmethod
    def for_daemon(cls, path: Path | str) -> Registry:
        """The registry for a daemon, which must run even if it cannot use it: on a disk gone
        read-only, read-only; damaged, read-only if SQLite still reads it, else empty. Either way
        enrolling is refused with the file and the cause, and the log says it once."""
        try:
            registry = cls(path)
            verdict = registry.integrity()
            if verdict == "ok":
                return registry
            registry.close()
            cause = f"SQLite integrity check: {verdict}"
            damaged = True
        except RegistryError as error:
            cause = str(error.__cause__ or error)
            damaged = _damaged(error.__cause__)
        state = "damaged" if damaged else "read-only" if Path(path).exists() else "unavailable"
        problem = f"{state}: {path}: {cause}"
        fallback: Registry | None = None
        if Path(path).exists():
            try:
                fallback = cls(path, read_only=True)
                fallback.problem = problem
                lookups = "tags enrolled before still play"
            except RegistryError:
                pass
        if fallback is None:
            fallback = cls.empty(path, problem)
            lookups = "tags without a card id on them are unknown"
        if damaged:
            log.error(
                "the card registry %s is damaged (%s): %s, enrolling is off. Restore a backup "
                "(move the file away, then `companion cards import`), see docs/nfc.md",
                path,
                cause,
                lookups,
            )
        else:
            log.warning(
                "the card registry %s cannot be written (%s): %s, enrolling is off", path, cause, lookups
            )
        return fallback

    def health(self) -> str:
        """For /healthz: "ok", or what is wrong ("damaged: <file>: <cause>", "read-only: ...")."""
        return self.problem or "ok"

    def integrity(self) -> str:
        """SQLite's quick check of the file: "ok", or what it found."""
        try:
            with self._lock:
                rows = self._db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.Error as error:
            return str(error)
        return "; ".join(str(row[0]) for row in rows[:3]) or "ok"

    def generation(self) -> tuple[int, int]:
        """Changes with every write to the registry, this process's or another's (`companion cards
        import` beside the running service: SQLite's data_version): the known-tag cache's stamp."""
        try:
            with self._lock:
                version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
                return self._changes, version
        except sqlite3.Error:
            return self._changes, -1

    def lookup(self, uid: str) -> str | None:
        """The card a tag belongs to, or None (also for a malformed UID: it is simply unknown)."""
        try:
            key = normalize_uid(uid)
        except ValueError:
            return None
        try:
            with self._lock:
                row = self._db.execute("SELECT card FROM tags WHERE uid = ?", (key,)).fetchone()
        except sqlite3.Error as error:  # a damaged registry, still read: this tag is unknown
            log.warning("looking up tag %s in the card registry %s failed: %s", key, self.path, error)
            return None
        return None if row is None else str(row[0])

    def entry(self, uid: str) -> TagEntry | None:
        key = normalize_uid(uid)
        with self._lock:
            row = self._db.execute(
                "SELECT uid, card, ndef, enrolled_at FROM tags WHERE uid = ?", (key,)
            ).fetchone()
        return None if row is None else TagEntry(row[0], row[1], bool(row[2]), row[3])

    def register(self, uid: str, card: str, *, ndef: bool = False, force: bool = False) -> TagEntry:
        """Map a tag to a card. A tag registered to another card raises RegistryConflict unless
        `force`; registering it again to the same card only refreshes its `ndef` flag."""
        key = normalize_uid(uid)
        self.ensure_writable()
        with self._lock:
            try:  # a failing disk (I/O error, database locked) is a RegistryError, nothing written
                row = self._db.execute("SELECT card FROM tags WHERE uid = ?", (key,)).fetchone()
                if row is not None and row[0] != card and not force:
                    raise RegistryConflict(key, row[0])
                entry = TagEntry(key, card, ndef, utc_now())
                self._db.execute(
                    "INSERT OR REPLACE INTO tags (uid, card, ndef, enrolled_at) VALUES (?, ?, ?, ?)",
                    (entry.uid, entry.card, int(entry.ndef), entry.enrolled_at),
                )
            except sqlite3.Error as error:
                raise RegistryError(f"could not register tag {key}: {error}") from error
            self._changes += 1
            return entry

    def forget(self, uid: str) -> bool:
        key = normalize_uid(uid)
        self.ensure_writable()
        with self._lock:
            try:
                cursor = self._db.execute("DELETE FROM tags WHERE uid = ?", (key,))
            except sqlite3.Error as error:
                raise RegistryError(f"could not forget tag {key}: {error}") from error
            self._changes += 1
        return cursor.rowcount > 0

    def entries(self, game: str | None = None) -> list[TagEntry]:
        """Every registered tag (of one game), by card id."""
        query = "SELECT uid, card, ndef, enrolled_at FROM tags"
        params: tuple[str, ...] = ()
        if game is not None:
            query += " WHERE card LIKE ? ESCAPE '\\'"
            params = (game.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%",)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY card, uid", params).fetchall()
        return [TagEntry(uid, card, bool(ndef), at) for uid, card, ndef, at in rows]

    def enrolled_cards(self, game: str | None = None) -> set[str]:
        """The cards that have at least one tag."""
        return {entry.card for entry in self.entries(game)}

    def export(self) -> dict[str, Any]:
        """A JSON-able backup of the box (see `import_`)."""
        return {"version": EXPORT_VERSION, "tags": [entry.to_json() for entry in self.entries()]}

    def import_(
        self, data: Any, *, force: bool = False, known: set[str] | None = None
    ) -> dict[str, list[str]]:
        """Load an `export()`. Returns which UIDs were added, unchanged, and refused (with why):
        a tag registered here to another card is refused unless `force`; a card id not in `known`
        (when given) is refused always. Every tag it adds is written in one transaction: a power
        cut or a failing disk leaves all of them or none (RegistryError), never half an import."""
        if (
            not isinstance(data, dict)
            or data.get("version") != EXPORT_VERSION
            or not isinstance(data.get("tags"), list)
        ):
            raise ValueError(
                f"not a card registry export (expected {{'version': {EXPORT_VERSION}, 'tags': [...]}})"
            )
        report: dict[str, list[str]] = {"added": [], "unchanged": [], "refused": []}
        try:
            have = {entry.uid: entry.card for entry in self.entries()}
        except sqlite3.Error as error:
            raise RegistryError(f"could not read the card registry {self.path}: {error}") from error
        adding: list[TagEntry] = []
        for item in data["tags"]:
            entry = _imported(item, known)
            if isinstance(entry, str):
                report["refused"].append(entry)
            elif have.get(entry.uid) == entry.card:
                report["unchanged"].append(entry.uid)
            elif entry.uid in have and not force:
                already = have[entry.uid]
                report["refused"].append(f"{entry.uid}: already {already} here (use --force to replace)")
            else:
                have[entry.uid] = entry.card
                adding.append(entry)
                report["added"].append(entry.uid)
        if adding:
            self._write_all(adding)
        return report

    def _write_all(self, entries: list[TagEntry]) -> None:
        self.ensure_writable()
        rows = [(entry.uid, entry.card, int(entry.ndef), entry.enrolled_at) for entry in entries]
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(
                    "INSERT OR REPLACE INTO tags (uid, card, ndef, enrolled_at) VALUES (?, ?, ?, ?)", rows
                )
                self._db.execute("COMMIT")
                self._changes += 1
            except sqlite3.Error as error:
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                raise RegistryError(f"could not import {len(rows)} tags: {error}") from error

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def ensure_writable(self) -> None:
        """Raise RegistryError, saying why, if this registry cannot be written."""
        if self.problem:
            raise RegistryError(f"Enrolling is off: the card registry is {self.problem}. See docs/nfc.md.")
        if self.read_only:
            raise RegistryError(f"the card registry {self.path} is open read-only: enrolling is off")


def _imported(item: Any, known: set[str] | None) -> TagEntry | str:
    """One tag of an export, checked: the entry to write, or why it is refused."""
    if not isinstance(item, dict):
        return f"{item!r}: not an object"
    card = item.get("card")
    try:
        key = normalize_uid(item.get("uid"))  # type: ignore[arg-type]
    except ValueError as error:
        return str(error)
    if not isinstance(card, str) or (known is not None and card not in known):
        return f"{key}: unknown card {card!r}"
    return TagEntry(key, card, bool(item.get("ndef")), utc_now())


def check_registry(path: Path) -> tuple[str, str, str]:
    """`companion doctor`'s look at the card registry, read-only: (status, message, fix) with status
    "ok", "warn" or "FAIL" (doctor's `Check("registry", *check_registry(registry_path(config)))`).

    A damaged registry FAILs: the table still plays (cards known by the id written on them, the
    virtual mat), but tags known only by their UID are unknown and nothing can be enrolled."""
    restore = "move it away, then `companion cards import` your last export (see docs/nfc.md)"
    if not path.exists():
        return "ok", f"no card registry at {path} yet: the first enrollment creates it", ""
    try:
        registry = Registry(path, read_only=True)
    except RegistryError as error:
        if _damaged(error.__cause__):
            return "FAIL", f"{error}: tags known by their UID are unknown, enrolling is off", restore
        return "warn", str(error), f"check that the service user can read and write {path}"
    try:
        verdict = registry.integrity()
        tags = len(registry.entries()) if verdict == "ok" else 0
    except sqlite3.Error as error:
        verdict = str(error)
    finally:
        registry.close()
    if verdict != "ok":
        return "FAIL", f"the card registry {path} is damaged (SQLite integrity check: {verdict})", restore
    return "ok", f"{path}: {tags} tag{'s' if tags != 1 else ''} enrolled, integrity ok", ""
