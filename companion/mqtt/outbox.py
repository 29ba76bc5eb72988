"""The outbox: results waiting for the broker, in SQLite beside the journal.

A result is written here (and synced) while the table still holds the input that finished it, so a
broker that is away, a restart or a `kill -9` loses nothing: whatever is not acknowledged is sent
again when the broker is back. A result sent twice is harmless (its id is stable). Rows are kept
after they are sent: they are what the table already told, so an undo can take one back.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    id      TEXT PRIMARY KEY,
    game_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    sent    INTEGER NOT NULL DEFAULT 0
)
"""


@dataclass(frozen=True)
class Pending:
    id: str
    version: int
    payload: dict[str, Any]


class Outbox:
    """Results by id; `put` a new or changed one, `pending` the unsent, `sent` once acknowledged."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # like the journal: on disk before the table goes on
        self._db.execute(SCHEMA)

    def put(self, payloads: list[dict[str, Any]]) -> None:
        """Store new or changed results (each with an "id" and a "game_id"), all at once, as unsent."""
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for payload in payloads:
                text = json.dumps(payload, separators=(",", ":"), sort_keys=True)
                self._db.execute(
                    "INSERT INTO results (id, game_id, payload) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE "
                    "SET payload = excluded.payload, version = version + 1, sent = 0 "
                    "WHERE payload != excluded.payload",
                    (payload["id"], payload["game_id"], text),
                )

    def of_game(self, game_id: str) -> dict[str, dict[str, Any]]:
        """Every result stored for one game (retractions included), by id."""
        with self._lock:
            query = "SELECT id, payload FROM results WHERE game_id = ?"
            rows = self._db.execute(query, (game_id,)).fetchall()
        return {str(rid): json.loads(text) for rid, text in rows}

    def pending(self) -> list[Pending]:
        """The results not yet acknowledged by the broker, in the order they were first stored."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, version, payload FROM results WHERE sent = 0 ORDER BY rowid"
            ).fetchall()
        return [Pending(str(rid), int(version), json.loads(text)) for rid, version, text in rows]

    def sent(self, rid: str, version: int) -> None:
        """The broker has `version` of result `rid`; a newer version stays pending."""
        with self._lock:
            self._db.execute("UPDATE results SET sent = 1 WHERE id = ? AND version = ?", (rid, version))

    def close(self) -> None:
        with self._lock:
            self._db.close()
