"""Safe retries: a control POST with an Idempotency-Key is applied once; a repeat gets the first answer,
across a restart too. Health answers without the journal's lock."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from companion.appliance.daemon import Daemon
from companion.appliance.systemd import daemon_alive
from tests.conftest import AUTH, make_config
from tests.servers import TOKEN, Server

START = {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"], "options": {"start": 0}}
MISSION = {"type": "mission", "seat": 0, "tile": "1/5", "target": 1}


def call(client: Any, path: str, body: Any = None, key: str | None = None) -> tuple[int, Any]:
    headers = {**AUTH, **({"Idempotency-Key": key} if key is not None else {})}
    response = client.post(path, json=body, headers=headers)
    return response.status_code, response.get_json()


def journal_length(daemon: Daemon) -> int:
    return len(list(daemon.journal.entries()))


def test_a_repeated_key_gets_the_first_answer_and_applies_nothing_again(daemon: Daemon, client: Any) -> None:
    first = call(client, "/api/games", START, key="start-1")
    assert first[0] == 201
    mission = call(client, "/api/actions", MISSION, key="m-1")
    assert mission[0] == 200
    assert call(client, "/api/actions", {"type": "mission", "seat": 1, "tile": "3/3", "target": 3})[0] == 200
    tap = call(client, "/api/taps", {"card": "spy-team/red-3"}, key="tap 1")  # a space is printable
    assert tap[0] == 200
    undo = call(client, "/api/undo", None, key="undo-1")
    length = journal_length(daemon)
    # Retries after answers that never arrived: the same status and body, and nothing new journaled.
    assert call(client, "/api/games", START, key="start-1") == first
    assert call(client, "/api/actions", MISSION, key="m-1") == mission
    assert call(client, "/api/taps", {"card": "spy-team/red-3"}, key="tap 1") == tap
    assert call(client, "/api/undo", None, key="undo-1") == undo
    assert journal_length(daemon) == length
    # The undo was not applied twice (its answer is the view and what it took back).
    assert {**client.get("/api/state").get_json(), "taken_back": "Took back: Ann played Red 3."} == undo[1]
    # Without a key (or with a new one), an undo is a new input.
    assert call(client, "/api/undo", None, key="undo-2")[0] == 200
    assert journal_length(daemon) == length + 1


def test_repeats_survive_a_restart(tmp_path: Path) -> None:
    first_daemon = Daemon(make_config(tmp_path / "journal.db"))
    client = first_daemon.app.test_client()
    call(client, "/api/games", START)
    answer = call(client, "/api/actions", MISSION, key="before-the-crash")
    first_daemon.close()
    again = Daemon(make_config(tmp_path / "journal.db"))
    try:
        length = journal_length(again)
        assert call(again.app.test_client(), "/api/actions", MISSION, key="before-the-crash") == answer
        assert journal_length(again) == length
    finally:
        again.close()


def test_a_key_reused_for_another_input_is_refused(daemon: Daemon, client: Any) -> None:
    call(client, "/api/games", START, key="k")
    length = journal_length(daemon)
    status, body = call(client, "/api/actions", MISSION, key="k")
    assert status == 409 and "already used for another input" in body["error"]
    assert journal_length(daemon) == length


def test_a_refused_request_keeps_nothing_so_its_repeat_is_checked_again(daemon: Daemon, client: Any) -> None:
    status, body = call(client, "/api/taps", {"card": "spy-team/red-3"}, key="early")
    assert status == 409 and "No game is running" in body["error"]
    assert journal_length(daemon) == 0
    call(client, "/api/games", START)
    call(client, "/api/actions", MISSION)
    call(client, "/api/actions", {"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    assert call(client, "/api/taps", {"card": "spy-team/red-3"}, key="early")[0] == 200  # now it applies


@pytest.mark.parametrize("key", ["", "x" * 65, "caf\u00e9", "tab\there"])
def test_a_malformed_key_is_a_400_and_applies_nothing(daemon: Daemon, client: Any, key: str) -> None:
    status, body = call(client, "/api/games", START, key=key)
    assert status == 400 and "Idempotency-Key" in body["error"]
    assert journal_length(daemon) == 0


def test_healthz_and_the_watchdog_answer_while_the_journal_is_busy(daemon: Daemon, client: Any) -> None:
    """Neither reads the disk nor waits for the journal's lock (an input being synced holds it)."""
    answers: list[Any] = []

    def probe() -> None:
        answers.append(client.get("/healthz").get_json())
        daemon_alive(daemon)
        answers.append("alive")

    with daemon.journal._lock:
        thread = threading.Thread(target=probe, daemon=True)
        thread.start()
        thread.join(timeout=5)
        assert not thread.is_alive(), "healthz or the watchdog waited for the journal's lock"
    assert answers[0]["journal"] == "ok" and answers[0]["ok"] is True and answers[1] == "alive"


def test_the_control_page_resends_a_lost_undo_with_the_same_key(browser: Any, server: Server) -> None:
    """The undo lands but its answer is lost (the connection drops): the page tries again with the
    same key, and the table takes back one input, not two."""
    server.call("POST", "/api/games", START)
    server.call("POST", "/api/actions", MISSION)
    server.call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    server.call("POST", "/api/taps", {"card": "spy-team/red-9"})
    keys: list[str | None] = []

    def lose_the_first_answer(route: Any) -> None:
        keys.append(route.request.headers.get("idempotency-key"))
        if len(keys) == 1:
            route.fetch()  # the server gets it and answers ...
            route.abort("connectionreset")  # ... but the answer never reaches the page
        else:
            route.continue_()

    page = browser.new_page()
    page.set_default_timeout(10_000)
    page.route("**/api/undo", lose_the_first_answer)
    page.goto(f"{server.url}/control#token={TOKEN}")
    page.click("#undo")
    page.click("#undo")
    expect(page.locator("#message")).to_have_text("Took back: Ann played Red 9.")
    assert len(keys) == 2 and keys[0] is not None and keys[0] == keys[1]
    state = server.call("GET", "/api/state")
    assert state["played"] == [] and state["status"] == "playing"
    assert all(team["mission"] is not None for team in state["teams"])  # the missions were not undone
    page.close()
