"""A disk that fails under the running daemon (issue 26): `companion run`, unmodified, on the file
system of tests/lazyfs.py, told to fail the next write or fsync of one file with EIO, as a dying SD
card does, while a request is in flight. Every answer is JSON, a 4xx or a 503 (never a 500) or a
success that kept its word; nothing is half-applied; the daemon keeps running and takes the same
request once the disk is good again; after a restart (and after a power cut) the files are whole.

(tests/table/test_failing_disk.py injects the same errors at the journal's and the registry's own
calls, in-process; here the kernel hands SQLite and Python a real EIO.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lazymount import LazyMount, why_not_mountable
from tests.power_cut_work import SPY_GAME, read_only, request
from tests.servers import Server, free_port, running_companion

pytestmark = pytest.mark.skipif(why_not_mountable() is not None, reason=str(why_not_mountable()))

SPY = {"game": "spy", "players": ["Ann", "Bob"], "options": {"start": 1}}
ERRORS = (400, 403, 404, 409, 503)


@pytest.fixture
def lazy(tmp_path: Path) -> Iterator[LazyMount]:
    with LazyMount(tmp_path) as mount:
        yield mount


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """An [mqtt] broker that is never there: the results stay in the outbox, where the test reads them."""
    path = tmp_path / "companion.toml"
    path.write_text(f'[mqtt]\nurl = "mqtt://127.0.0.1:{free_port()}"\ntable = "eio"\n')
    return path


def refused(answer: tuple[int, Any, Any]) -> str:
    """The error of an answer that must be a refusal in JSON, never a 500."""
    status, body, _ = answer
    assert status in ERRORS, (status, body)
    assert isinstance(body, dict) and isinstance(body.get("error"), str), body
    return str(body["error"])


def state(server: Server) -> Any:
    return request(server, "GET", "/api/state")[1]


def tags(server: Server) -> dict[str, str]:
    return {tag["uid"]: tag["card"] for tag in request(server, "GET", "/api/cards/export")[1]["tags"]}


def integrity(folder: Path) -> dict[str, str]:
    verdicts = {}
    for path in sorted(folder.glob("*.db")):
        with read_only(path) as connection:
            verdicts[path.name] = connection.execute("PRAGMA integrity_check").fetchone()[0]
    return verdicts


def healthy(server: Server) -> None:
    assert server.process.poll() is None, "the daemon stopped"
    status, health, _ = request(server, "GET", "/healthz")
    assert status == 200 and health["ok"], health


@pytest.mark.parametrize("call", ["fsync", "write"])
def test_a_journal_input_the_disk_fails_is_refused_and_taken_once_the_disk_is_good(
    lazy: LazyMount, call: str
) -> None:
    db = lazy.mountpoint / "journal.db"
    with running_companion(db) as server:
        assert request(server, "POST", "/api/games", SPY, {"Idempotency-Key": "k-0"})[0] == 201
        before = state(server)
        lazy.fail(call, "journal.db-wal")
        tap = {"card": "spy/green-spy"}
        failed = request(server, "POST", "/api/taps", tap, {"Idempotency-Key": "k-1"})
        assert "could not record" in refused(failed)
        assert state(server) == before  # nothing of it applied
        healthy(server)
        again = request(server, "POST", "/api/taps", tap, {"Idempotency-Key": "k-1"})
        assert again[0] == 200 and state(server) == again[1] != before
    with running_companion(db) as server:
        assert state(server) == again[1]  # the tap once, not twice
    assert set(integrity(lazy.mountpoint).values()) == {"ok"}


def test_a_start_whose_archive_cannot_be_synced_keeps_the_games_in_the_journal(lazy: LazyMount) -> None:
    db = lazy.mountpoint / "journal.db"
    with running_companion(db) as server:
        assert request(server, "POST", "/api/games", SPY)[0] == 201
        lazy.fail("fsync", "journal-archive")
        second = request(server, "POST", "/api/games", {**SPY, "players": ["Cy", "Di"]})
        if second[0] != 201:  # the start itself refused: then nothing of it is seen
            refused(second)
            assert [p["name"] for p in state(server)["players"]] == ["Ann", "Bob"]
        healthy(server)
        third = request(server, "POST", "/api/games", {**SPY, "players": ["Ed", "Flo"]})
        assert third[0] == 201 and state(server) == third[1]
    lazy.cut()  # a power cut right after: the archive and the journal agree all the same
    with running_companion(db) as server:
        assert state(server) == third[1]
    assert set(integrity(lazy.mountpoint).values()) == {"ok"}


@pytest.mark.parametrize("call", ["fsync", "write"])
def test_an_enrollment_tap_the_registry_cannot_take_is_refused_and_stays_on_its_card(
    lazy: LazyMount, call: str
) -> None:
    with running_companion(lazy.mountpoint / "journal.db") as server:
        started = request(server, "POST", "/api/cards/session", {"game": "spy"})
        assert started[0] == 201
        card = started[1]["session"]["current"]["id"]
        lazy.fail(call, "cards.db-wal")
        status, answer, _ = request(server, "POST", "/api/cards/session/tap", {"uid": "04a1b2c3"})
        assert status != 500, answer
        if status == 200:  # the session's answer: refused, on the same card
            assert answer["result"]["status"] == "refused" and answer["session"]["current"]["id"] == card
        else:
            refused((status, answer, None))
        assert tags(server) == {}
        healthy(server)
        status, answer, _ = request(server, "POST", "/api/cards/session/tap", {"uid": "04a1b2c3"})
        assert status == 200 and answer["result"]["status"] == "enrolled", answer
        assert tags(server) == {"04a1b2c3": card}
    lazy.cut()
    with running_companion(lazy.mountpoint / "journal.db") as server:
        assert tags(server) == {"04a1b2c3": card}


@pytest.mark.parametrize(("call", "skip"), [("fsync", 0), ("write", 0), ("fsync", 2)])
def test_an_import_the_disk_fails_adds_all_of_its_tags_or_none(lazy: LazyMount, call: str, skip: int) -> None:
    """The import is one transaction (it was a commit per tag): whichever call fails, the answer
    is a refusal with no tag added, or a success with all of them."""
    box = {"version": 1, "tags": [{"uid": f"04000000{i:02x}", "card": "spy/red-spy"} for i in range(40)]}
    with running_companion(lazy.mountpoint / "journal.db") as server:
        lazy.fail(call, "cards.db-wal", skip)
        answer = request(server, "POST", "/api/cards/import", box)
        if answer[0] == 200:
            assert len(answer[1]["added"]) == 40 and len(tags(server)) == 40
        else:
            assert "could not import" in refused(answer)
            assert tags(server) == {}  # none of the 40, not the first few
        lazy.fail(call, "never-a-file-name")  # the disk is good again (a failure not reached is off)
        healthy(server)
        again = request(server, "POST", "/api/cards/import", box)
        assert again[0] == 200 and len(again[1]["added"]) + len(again[1]["unchanged"]) == 40
    lazy.cut()
    with running_companion(lazy.mountpoint / "journal.db") as server:
        assert len(tags(server)) == 40
    assert set(integrity(lazy.mountpoint).values()) == {"ok"}


@pytest.mark.parametrize("call", ["fsync", "write"])
def test_a_pairing_that_cannot_be_saved_is_refused_and_the_code_still_works(
    lazy: LazyMount, call: str
) -> None:
    with running_companion(lazy.mountpoint / "journal.db") as server:
        code = {"code": request(server, "POST", "/api/pairing")[1]["code"]}
        lazy.fail(call, "paired-devices")
        failed = request(server, "POST", "/api/pair", code, {"Authorization": ""})
        assert "could not save" in refused(failed) and failed[2] is None  # no cookie handed out
        healthy(server)
        status, _, cookie = request(server, "POST", "/api/pair", code, {"Authorization": ""})
        assert status == 200 and cookie
    lazy.cut()
    with running_companion(lazy.mountpoint / "journal.db") as server:
        headers = {"Authorization": "", "Cookie": cookie.split(";", 1)[0]}
        assert request(server, "GET", "/api/pair", headers=headers)[1] == {"paired": True}


def test_a_result_the_outbox_cannot_take_is_stored_at_the_next_input(lazy: LazyMount, config: Path) -> None:
    """The game's last input is recorded (its answer says so); the result, which the outbox could
    not take then, is stored with the next input, even one that starts another game."""
    db = lazy.mountpoint / "journal.db"
    with running_companion(db, "--config", str(config)) as server:
        assert request(server, "POST", "/api/games", SPY)[0] == 201
        for path, body in SPY_GAME[:-1]:
            assert request(server, "POST", path, body)[0] == 200
        lazy.fail("fsync", "outbox.db-wal")
        path, body = SPY_GAME[-1]
        last = request(server, "POST", path, body)
        assert last[0] == 200 and last[1]["status"] == "game-over"
        healthy(server)
        assert request(server, "POST", "/api/games", {**SPY, "players": ["Cy", "Di"]})[0] == 201
        assert games_in_outbox(db.with_name("outbox.db")) == [["Ann", "Bob"]]
    lazy.cut()
    assert games_in_outbox(db.with_name("outbox.db")) == [["Ann", "Bob"]]


def games_in_outbox(outbox: Path) -> list[list[str]]:
    with read_only(outbox) as connection:
        rows = connection.execute("SELECT payload FROM results").fetchall()
    results = [json.loads(text) for (text,) in rows]
    return [[p["name"] for p in r["players"]] for r in results if r["kind"] == "game"]
