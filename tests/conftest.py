"""Shared fixtures: a whole daemon on a temporary journal with mock pins and its Flask test client;
a real server and Debian's Chromium for the browser tests."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.daemon import Daemon
from companion.core.config import Config
from tests.servers import Server, running_companion

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

# PC/SC clients in the tests (and the companions they start) talk to the tests' own pcscd only
# (tests/pcsc_card.py), never the machine's: libpcsclite reads this once per process, so it is set
# before any test can touch it. Until that pcscd runs, every `auto` here finds no PC/SC reader.
os.environ["PCSCLITE_CSOCK_NAME"] = str(
    Path(tempfile.gettempdir()) / f"companion-pcscd-{os.getpid()}" / "pcscd.comm"
)


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


BUTTON_HOLD = 0.1  # [pins] undo_hold, the seat buttons' hold too: short, so the suite stays fast


@pytest.fixture
def buttons_daemon(tmp_path: Path) -> Iterator[Daemon]:
    """A daemon on mock pins whose buttons hold in BUTTON_HOLD seconds (POST /api/buttons)."""
    config = make_config(tmp_path / "journal.db")
    config.pins = {"undo_hold": BUTTON_HOLD}
    running = Daemon(config)
    running.start()
    yield running
    running.close()


@pytest.fixture
def cues(daemon: Daemon) -> list[dict[str, Any]]:
    """Every cue the table plays from now on, as the scoreboard receives them."""
    seen: list[dict[str, Any]] = []
    daemon.table.listeners.append(lambda kind, cue: seen.append(cue.to_json()) if kind == "cue" else None)
    return seen


def state(client: Any) -> dict[str, Any]:
    """The public view, as the scoreboard reads it."""
    response = client.get("/api/state")
    assert response.status_code == 200
    return response.get_json()


def column(view: dict[str, Any], key: str) -> list[Any]:
    """One field of every player, seat by seat."""
    return [player[key] for player in view["players"]]


def open_event_stream(client: Any) -> tuple[Any, Iterator[bytes], list[str]]:
    """Open /api/events as a scoreboard does and read up to the current state, so that from then on
    the stream receives every message. Read it in this thread: Flask keeps the request context with
    the generator. Close the response when done."""
    response = client.get("/api/events", buffered=False)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    stream = iter(response.response)
    chunks: list[str] = []
    while not chunks or not chunks[-1].startswith("event: state"):
        chunks.append(next(stream).decode())
    return response, stream, chunks


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (never a browser Playwright downloads)."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is required in CI (scripts/test installs it)")
        pytest.skip("Chromium is not installed (scripts/test installs it where it can)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """A real `companion run` on a free port, with the test token."""
    with running_companion(tmp_path / "journal.db") as running:
        yield running
