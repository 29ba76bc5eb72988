"""What the table keeps on disk: the journal (there, readable, whole, any torn write recovered), the
free space, an overlay file system that forgets it all at reboot, and the card registry."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from companion.appliance.doctor.report import Check, fail, ok, warn
from companion.core.config import Config
from companion.readers.registry import check_registry, registry_path
from companion.table.disk import nearest_existing, read_only_fs
from companion.table.journal import Journal, JournalError
from companion.table.wal import WalReport, inspect_wal

RECENT = timedelta(days=7)  # a recovery older than this is history, not news
LOW_DISK = 50 * 2**20  # bytes free under which doctor warns
FULL_DISK = 5 * 2**20  # ... and fails: inputs are about to be refused
REPAIR = "see 'Repairing the journal' in docs/operations.md"
BACKUP = "restore the last backup (see 'Backups' in docs/operations.md)"


class Contents(NamedTuple):
    """What a readable journal holds, as the daemon will fold it at start."""

    summary: str  # its entries and the game they make
    size: str  # on disk, with the archive
    last: int  # the last entry's number (0: none)
    recoveries: list[tuple[str, str]]  # (time, what) of each torn write found on opening it


def check_journal(db: Path, daemon_running: bool) -> list[Check]:
    if not db.exists():
        return [_journal_to_come(db)]
    checks = _read_only_disk(db)
    # A running daemon owns the WAL and may be writing it right now: only a stopped one is looked at.
    wal = None if daemon_running else inspect_wal(db)
    contents = _read_journal(db)
    if isinstance(contents, Check):
        return [*checks, contents]
    checks.append(ok("journal", f"{db}: {contents.summary}, {contents.size}, integrity ok"))
    return [*checks, *_torn_write(wal, contents.last), *_recoveries(contents.recoveries)]


def _journal_to_come(db: Path) -> Check:
    """No journal file yet: fine if the daemon can create it."""
    folder = nearest_existing(db.parent)
    if os.access(folder, os.W_OK) and not read_only_fs(folder):
        return ok("journal", f"no journal yet at {db}: the daemon creates it on its first start")
    return fail("journal", f"no journal at {db}, and {folder} is not writable", f"create {db.parent}")


def _read_only_disk(db: Path) -> list[Check]:
    if not read_only_fs(db.parent):
        return []
    return [
        fail(
            "journal",
            f"the disk holding {db} is read-only: the scoreboard shows the game, every input is refused",
            "the SD card may be failing: see `dmesg`, copy the journal away (docs/operations.md), "
            "then fsck or replace the card",
        )
    ]


def _read_journal(db: Path) -> Contents | Check:
    """The journal opened read-only, checked whole and folded: what it holds, or the Check saying why
    it cannot be used as it is."""
    try:
        journal = Journal(db, read_only=True)
    except JournalError as error:
        return fail("journal", str(error), REPAIR)
    try:
        integrity = journal.check()
        if integrity != "ok":
            return fail("journal", f"SQLite integrity check of {db}: {integrity}", BACKUP)
        tables = journal.tables()
        if "entries" not in tables:  # the daemon creates its tables on start: nothing is lost
            return _without_entries(db, tables)
        summary, last = _fold(journal)
        return Contents(summary, _size(journal.size()), last, journal.recoveries())
    except JournalError as error:  # an entry that is not JSON, an input the rules refuse
        return fail("journal", str(error), REPAIR)
    except sqlite3.Error as error:  # not a database at all, or a damaged one
        return fail("journal", f"{db} cannot be read as a journal: {error}", BACKUP)
    finally:
        journal.close()


def _without_entries(db: Path, tables: list[str]) -> Check:
    """A journal file with no entries table: empty (0 bytes, or no tables), or some other database."""
    if not tables or set(tables) <= {"recoveries"}:
        return ok("journal", f"{db}: empty journal (no entries yet): the daemon sets it up on its next start")
    return warn(
        "journal",
        f"{db} holds no journal entries, only the tables {', '.join(tables)}: is it the journal?",
        "check path in [journal]; the daemon would add its entries table to this file",
    )


def _fold(journal: Journal) -> tuple[str, int]:
    """Fold the journal as the daemon will at start: a short summary and the last entry's number."""
    from companion.games.packs import playable_games
    from companion.table.table import Table

    entries = list(journal.entries())
    table = Table(journal, playable_games()[0])
    view = table.view()
    game = f"{view['game']} round {view['round']}, {view['status']}" if view.get("game") else "no game"
    last = entries[-1].seq if entries else 0
    return f"{len(entries)} entries (last {last}), {game}", last


def _size(size: dict[str, int]) -> str:
    """The journal's size on disk: the live file (about the current game) and the archive."""
    text = f"{_kib(size['bytes'])} on disk"
    if size["archived_entries"] or size["archive_bytes"]:
        text += (
            f" + archive {_kib(size['archive_bytes'])} ({size['archived_entries']} entries of finished games)"
        )
    return text


def _kib(size: int) -> str:
    return f"{size / 1024:.0f} KiB" if size < 10 * 2**20 else f"{size / 2**20:.0f} MiB"


def _torn_write(wal: WalReport | None, last: int) -> list[Check]:
    """A torn last write in the WAL of a stopped daemon: the next start recovers it."""
    if wal is None or not wal.torn:
        return []
    return [
        warn(
            "journal",
            f"recovered: {wal.describe()} (up to entry {last}); it was never acknowledged, "
            "so no input shown on the table is lost",
            "nothing to repair; the next start notes the recovery in the journal",
        )
    ]


def _recoveries(recoveries: list[tuple[str, str]]) -> list[Check]:
    """The torn writes recovered before, as the journal recorded them: news only when recent."""
    if not recoveries:
        return []
    at, detail = recoveries[-1]
    text = f"recovered from a torn write {len(recoveries)} time(s), last at {at}: {detail}"
    fix = "nothing was lost; if it happens again, check the power supply and the SD card"
    return [warn("journal", text, fix) if _recent(at) else ok("journal", text)]


def _recent(at: str) -> bool:
    try:
        return datetime.now(UTC) - datetime.fromisoformat(at) < RECENT
    except (ValueError, TypeError):  # not a time we wrote: say it rather than hide it
        return True


def check_disk(db: Path) -> Check:
    stats = os.statvfs(nearest_existing(db.parent))
    free = stats.f_bavail * stats.f_frsize
    text = f"{free / 2**20:.0f} MiB free for the journal"
    fix = "free some space on the SD card (`sudo apt-get clean`, `sudo journalctl --vacuum-size=50M`)"
    if free < FULL_DISK:
        return fail("disk", f"{text}: new inputs will soon be refused", fix)
    if free < LOW_DISK:
        return warn("disk", text, fix)
    return ok("disk", text)


def check_overlay(db: Path, mounts: Path = Path("/proc/self/mounts")) -> list[Check]:
    """Raspberry Pi OS's overlay file system (raspi-config) keeps every write in memory: the
    journal and the card registry are gone at the next reboot, silently."""
    folder, best, volatile = str(db.parent.absolute()), "", False
    for line in mounts.read_text().splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        device, point, kind, options = fields[:4]
        inside = folder == point or folder.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best = point
            volatile = kind == "overlay" and (device == "overlayroot" or "/media/root-rw" in options)
    if not volatile:
        return []
    return [
        warn(
            "storage",
            f"{db.parent} is on the overlay file system: the journal and the card registry are lost at "
            "every reboot",
            "turn the overlay off (sudo raspi-config, Performance Options, Overlay File System), or put "
            "[journal] path on a partition the overlay leaves writable",
        )
    ]


def check_registry_of(config: Config) -> Check:
    """The card registry the config names, read-only (see companion.readers.registry)."""
    return Check("registry", *check_registry(registry_path(config)))
