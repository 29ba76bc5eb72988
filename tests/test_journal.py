"""The journal: append-only SQLite, synced, the fold's source of truth."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from companion.journal import Journal, effective_events


def test_entries_come_back_in_order_with_their_time(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.db")
    journal.append({"type": "start", "game": "spy-team"}, "2026-01-01T00:00:00")
    journal.append({"type": "tap", "card": "spy-team/red-1"}, "2026-01-01T00:00:01")
    entries = list(journal.entries())
    assert [e.event["type"] for e in entries] == ["start", "tap"]
    assert entries[1].at == "2026-01-01T00:00:01"
    assert entries[0].seq < entries[1].seq
    journal.close()


def test_the_journal_is_durable_wal_with_full_sync(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.db")
    assert journal._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert journal._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    journal.append({"type": "tap", "card": "x/y"}, "t")
    journal.close()
    # A second connection (another process after a restart) sees the entry.
    other = sqlite3.connect(tmp_path / "j.db")
    assert other.execute("SELECT count(*) FROM entries").fetchone()[0] == 1
    other.close()


def test_check_reports_ok_on_a_sound_file(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.db")
    assert journal.check() == "ok"
    journal.close()


def test_each_undo_takes_back_the_input_before_it() -> None:
    events = [
        {"type": "start"},
        {"type": "a"},
        {"type": "b"},
        {"type": "undo"},
        {"type": "c"},
        {"type": "undo"},
        {"type": "undo"},
    ]
    assert effective_events(events) == [{"type": "start"}]


def test_an_undo_with_nothing_left_changes_nothing() -> None:
    assert effective_events([{"type": "undo"}, {"type": "a"}]) == [{"type": "a"}]
