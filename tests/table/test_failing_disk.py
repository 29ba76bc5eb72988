"""A failing disk answers in JSON, never 500, and half-applies nothing (issue 26): an I/O error while
the journal looks up an idempotency key, while it archives finished games, and while the card
registry takes a tag. The errors are injected where the disk would raise them (the file calls of
the journal and SQLite's own errors); a file system that fails for real is issue 26's next step."""

from __future__ import annotations

import errno
import sqlite3
from typing import Any

import pytest

from companion.appliance.daemon import Daemon
from tests.conftest import AUTH

SPY = {"game": "spy", "players": ["Ann", "Bob"]}


def eio(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.EIO, "Input/output error")


def entries(daemon: Daemon) -> int:
    return sum(1 for _ in daemon.journal.entries())


def test_a_key_that_cannot_be_looked_up_is_refused_in_json(
    daemon: Daemon, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert client.post("/api/games", json=SPY, headers=AUTH).status_code == 201
    before, view = entries(daemon), client.get("/api/state").get_json()
    monkeypatch.setattr(daemon.journal, "_archive_db", eio)  # the archive's file cannot be looked at
    answer = client.post("/api/games", json=SPY, headers={**AUTH, "Idempotency-Key": "k-1"})
    assert answer.status_code == 409 and "could not record" in answer.get_json()["error"]
    assert client.get("/api/state").get_json() == view
    monkeypatch.undo()  # the disk is back: nothing was written, and the same request is a new one
    assert entries(daemon) == before
    again = client.post("/api/games", json=SPY, headers={**AUTH, "Idempotency-Key": "k-1"})
    assert again.status_code == 201 and entries(daemon) == before + 1


def test_an_archive_that_cannot_be_synced_leaves_the_games_where_they_are(
    daemon: Daemon, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert client.post("/api/games", json=SPY, headers=AUTH).status_code == 201
    monkeypatch.setattr("companion.table.journal.sync_directory", eio)  # the new archive file's folder
    assert client.post("/api/games", json=SPY, headers=AUTH).status_code == 201  # the start is kept
    assert entries(daemon) == 2 and len(daemon.journal.game_in_force()) == 1
    monkeypatch.undo()
    assert client.post("/api/games", json=SPY, headers=AUTH).status_code == 201
    assert entries(daemon) == 3 and daemon.journal.size()["archived_entries"] == 2  # moved at last


class FailingDb:
    """The registry's SQLite connection on a disk that has started failing."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def execute(self, *args: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def test_a_tag_the_registry_cannot_take_is_refused(daemon: Daemon, client: Any) -> None:
    """It answered 500 (a raw sqlite3.OperationalError); now the session refuses the tag, names the
    error and stays on the same card."""
    started = client.post("/api/cards/session", json={"game": "spy-team"}, headers=AUTH)
    assert started.status_code == 201, started.get_json()
    daemon.registry._db = FailingDb(daemon.registry._db)  # type: ignore[assignment]
    answer = client.post("/api/cards/session/tap", json={"uid": "04a1b2c3d4e5f6"}, headers=AUTH)
    assert answer.status_code == 200, answer.get_json()
    result, session = answer.get_json()["result"], answer.get_json()["session"]
    assert result["status"] == "refused" and "disk I/O error" in result["message"]
    assert session["position"] == 0 and session["enrolled"] == 0  # nothing half-applied
