"""Shared fixtures: a whole daemon on a temporary journal with mock pins, and its Flask test client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.config import Config
from companion.daemon import Daemon

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def make_config(db: Path) -> Config:
    return Config(token=TOKEN, db=db, readers=[{"device": "virtual"}], mock_pins=True)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    running = Daemon(make_config(tmp_path / "journal.db"))
    running.start()
    yield running
    running.close()


@pytest.fixture
def client(daemon: Daemon) -> Any:
    return daemon.app.test_client()


@pytest.fixture
def cues(daemon: Daemon) -> list[dict[str, Any]]:
    """Every cue the table plays from now on, as the scoreboard receives them."""
    seen: list[dict[str, Any]] = []
    daemon.table.listeners.append(lambda kind, payload: seen.append(payload) if kind == "cue" else None)
    return seen
