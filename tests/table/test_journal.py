"""The journal: append-only SQLite, synced, the fold's source of truth."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from companion.games import build_engines
from companion.games.catalog import load_catalog
from companion.table.entries import effective_events
from companion.table.journal import Journal, JournalError, JournalSchemaError, archive_path
from companion.table.table import Table


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


# Bounded by the current game


def spy_team_table(path: Path) -> Table:
    return Table(Journal(path), build_engines(load_catalog()))


def play_a_round_start(table: Table, names: list[str]) -> dict[str, Any]:
    table.start("spy-team", names, {"start": 0})
    table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    table.act({"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    return table.view()


def test_start_up_reads_the_journal_back_to_the_last_start_in_force_and_no_further(tmp_path: Path) -> None:
    Journal(tmp_path / "j.db").close()
    # A long history, never archived (a journal from before archives), that no game could fold.
    with sqlite3.connect(tmp_path / "j.db") as conn:
        rows = [("t", json.dumps({"type": "note", "n": n})) for n in range(2000)]
        rows.append(("t", json.dumps({"type": "start", "game": "spy-team", "players": ["A", "B", "C", "D"]})))
        conn.executemany("INSERT INTO entries (at, event) VALUES (?, ?)", rows)
    reader = Table(Journal(tmp_path / "j.db", read_only=True), build_engines(load_catalog()))
    assert reader.view()["status"] == "playing" and reader.journal.rows_read == 1  # the start only
    reader.journal.close()
    table = spy_team_table(tmp_path / "j.db")  # the daemon's table moves the old games away at once
    assert table.journal.size()["entries"] == 1 and table.journal.size()["archived_entries"] == 2000
    play_a_round_start(table, ["Ann", "Bob", "Cid", "Dee"])
    table.tap(card="spy-team/red-3")
    table.tap(card="spy-team/red-9")
    table.undo()  # the current game: start, 2 missions, 2 taps, an undo = 6 entries
    view = table.view()
    table.journal.close()

    again = Table(Journal(tmp_path / "j.db", read_only=True), build_engines(load_catalog()))
    assert again.view() == view
    assert again.journal.rows_read == 6  # not the 2,000 entries before the start
    assert len(again._events) == 4  # in memory: the current game's inputs in force, nothing older


def test_undo_past_a_start_reads_the_game_before_on_demand_across_a_restart(tmp_path: Path) -> None:
    table = spy_team_table(tmp_path / "j.db")
    play_a_round_start(table, ["Ann", "Bob", "Cid", "Dee"])
    table.tap(card="spy-team/red-3")
    first = table.view()
    play_a_round_start(table, ["W", "X", "Y", "Z"])
    table.journal.close()

    again = spy_team_table(tmp_path / "j.db")
    assert again.journal.rows_read == 3  # the second game only
    again.undo()
    again.undo()
    assert again.view()["players"][0]["name"] == "W"  # the second game's start is still in force
    # Its start taken back: the first game, exactly as it was.
    assert again.undo() == {**first, "taken_back": "Took back the start of Spy Team."}
    assert again.journal.rows_read == 3 + 4  # read on demand: the first game's four inputs
    again.tap(card="spy-team/red-9")  # and it goes on
    assert len(again.view()["trick"]) == 2
    again.journal.close()
    third = spy_team_table(tmp_path / "j.db")  # the undos are entries: a restart keeps them
    assert third.view() == again.view()


def test_finished_games_are_archived_and_the_history_stays_readable(tmp_path: Path) -> None:
    table = spy_team_table(tmp_path / "j.db")
    play_a_round_start(table, ["Ann", "Bob", "Cid", "Dee"])
    table.tap(card="spy-team/red-3")
    play_a_round_start(table, ["W", "X", "Y", "Z"])
    table.tap(card="spy-team/blue-1")
    table.undo()
    live = sqlite3.connect(tmp_path / "j.db")
    assert [row[0] for row in live.execute("SELECT json_extract(event, '$.type') FROM entries")] == [
        "start",
        "mission",
        "mission",
        "tap",
        "undo",
    ]  # only the current game is left in the live file
    live.close()
    assert archive_path(tmp_path / "j.db") == tmp_path / "j-archive.db"
    size = table.journal.size()
    assert (size["entries"], size["archived_entries"]) == (5, 4)
    assert size["archive_bytes"] > 0 and size["bytes"] > 0
    # The whole log reads as one: the archive first, then the live file.
    game = ["start", "mission", "mission", "tap"]
    assert [e.event["type"] for e in table.journal.entries()] == [*game, *game, "undo"]
    games = table.journal.games()
    assert [(g.game, g.players[0], len(g.entries)) for g in games] == [
        ("spy-team", "Ann", 4),
        ("spy-team", "W", 3),
    ]
    assert games[1].start.seq == 5


def test_an_archive_cut_short_by_a_crash_reads_each_entry_once(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.db")
    for n in range(5):
        journal.append({"type": "start", "game": "g", "n": n}, "t")
    journal.archive(before=3)
    # A crash after the copy into the archive and before the delete here: entries 3 and 4 in both.
    archive = sqlite3.connect(archive_path(tmp_path / "j.db"))
    with archive:
        archive.execute('INSERT INTO entries (seq, at, event) SELECT 3, \'t\', \'{"type":"start","n":2}\'')
    archive.close()
    assert [e.seq for e in journal.entries()] == [1, 2, 3, 4, 5]
    assert [e.seq for e in journal.game_in_force(before=5)] == [4]
    assert journal.archive(before=5) == 2
    assert [e.seq for e in journal.entries()] == [1, 2, 3, 4, 5]
    journal.close()


def test_an_entries_table_with_other_columns_is_refused_naming_the_file_and_left_alone(
    tmp_path: Path,
) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE entries (id INTEGER, payload BLOB)")
    with pytest.raises(JournalSchemaError) as refused:
        Journal(db)
    message = str(refused.value)
    assert str(db) in message and "(id, payload)" in message and "\n" not in message
    assert isinstance(refused.value, JournalError)
    with sqlite3.connect(db) as conn:  # nothing was added to someone else's database
        names = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert names == ["entries"]


def test_a_journal_from_before_idempotency_keys_is_brought_up_to_date(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE entries (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, event TEXT NOT NULL)")
        conn.execute("""INSERT INTO entries (at, event) VALUES ('t', '{"type":"start"}')""")
    reader = Journal(db, read_only=True)  # doctor reads it as it is
    assert [e.event for e in reader.entries()] == [{"type": "start"}]
    reader.close()
    journal = Journal(db)
    journal.append({"type": "tap"}, "t", key="k1", answer={"ok": 1})
    assert [e.key for e in journal.entries()] == [None, "k1"]
    keyed = journal.keyed("k1")
    assert keyed is not None and keyed.answer == {"ok": 1}
    journal.close()


def test_a_new_journal_syncs_the_folders_it_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[Path] = []
    for module in ("companion.table.journal", "companion.table.disk"):  # the file's name, the folders'
        monkeypatch.setattr(f"{module}.sync_directory", synced.append)
    Journal(tmp_path / "new" / "folder" / "j.db").close()
    assert synced == [tmp_path, tmp_path / "new", tmp_path / "new" / "folder"]
    synced.clear()
    Journal(tmp_path / "new" / "folder" / "j.db").close()
    assert synced == []  # nothing new: nothing to sync


def test_the_integrity_check_runs_when_asked_and_its_verdict_is_kept(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.db")
    assert journal.integrity == "not checked"
    assert journal.verify() == "ok" and journal.integrity == "ok"
    journal.close()
