"""Crash and power-cut safety: a real `companion run` killed with SIGKILL mid-round, a WAL whose last
write was torn, a journal edited by hand, a full disk and a read-only one.

What these prove is listed in docs/operations.md ("What the crash tests prove"). The tests that need
a real full or read-only filesystem mount a tmpfs (root with CAP_SYS_ADMIN, as in CI); elsewhere they
skip, except under CI=true, where they fail instead of hiding.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from companion.games import build_engines
from companion.games.base import PRESENTATION_KEYS, GameError
from companion.games.catalog import load_catalog
from companion.table.journal import Journal, JournalError
from companion.table.table import Table
from companion.table.wal import inspect_wal

TOKEN = "crash-token"
PLAYERS = ["Ann", "Bob", "Cid", "Dee"]
CARDS = [card["id"] for card in load_catalog()["spy-team"].to_json()["cards"]]
START = {"game": "spy-team", "players": PLAYERS}


# A real daemon in a subprocess


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Companion:
    """`companion run` on a free port, with mock pins and the virtual reader."""

    def __init__(self, db: Path, *, env: dict[str, str] | None = None, log: Path | None = None) -> None:
        self.db = db
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log or db.with_name(f"companion-{self.port}.log")
        self.env = {**os.environ, "COMPANION_TOKEN": TOKEN}
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):  # pytest under systemd
            self.env.pop(name, None)
        self.env.update(env or {})
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "companion.appliance.cli", "run", "--mock-pins", "--host", "127.0.0.1",
            "--port", str(self.port), "--db", str(self.db),
        ]  # fmt: skip

    def start(self, wait: bool = True) -> Companion:
        with self.log.open("ab") as out:  # a file, not a pipe: a full pipe would stall the daemon
            self.process = subprocess.Popen(
                self.command(), env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1):
                    return
            except urllib.error.HTTPError:
                return  # it answers (503: an unwell journal, still up)
            except OSError:
                assert self.process is not None
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"companion did not start:\n{self.output()}") from None
                time.sleep(0.05)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        request.add_header("Authorization", f"Bearer {TOKEN}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def state(self) -> dict[str, Any]:
        status, view = self.call("GET", "/api/state")
        assert status == 200
        return view

    def kill9(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        assert self.process.wait(timeout=10) == -signal.SIGKILL

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; the exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=10)

    def __enter__(self) -> Companion:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


# Spy Team inputs: both teams aim for 3/3, so a round lasts several tricks; cards in catalog order.


def next_input(view: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The next legal input for this Spy Team view: (API path, body)."""
    assert view["status"] == "playing", view["status"]
    prompt = view["prompt"]
    if prompt["tap"]:
        played = set(view["played"])
        return "/api/taps", {"card": next(card for card in CARDS if card not in played)}
    waiting = next(team for team in view["teams"] if team["mission"] is None)
    # The team's last option: "3/3" while it still has that tile.
    action = [a for a in prompt["actions"] if a["type"] == "mission" and a.get("seat") in waiting["seats"]][
        -1
    ]
    return "/api/actions", {key: value for key, value in action.items() if key not in PRESENTATION_KEYS}


def play(server: Companion, inputs: int) -> list[dict[str, Any]]:
    """Start a game and make `inputs` more inputs; the view after each (the first after the start)."""
    status, view = server.call("POST", "/api/games", START)
    assert status == 201, view
    views = [view]
    for _ in range(inputs):
        path, body = next_input(views[-1])
        status, view = server.call("POST", path, body)
        assert status == 200, view
        views.append(view)
    return views


def journal_events(db: Path) -> list[dict[str, Any]]:
    """The journal's entries as another process sees them (what is committed)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return [json.loads(text) for (text,) in conn.execute("SELECT event FROM entries ORDER BY seq")]


def doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "companion.appliance.cli", "doctor", *args]
    environment = {**os.environ, "COMPANION_TOKEN": TOKEN, **(env or {})}
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=60)


# kill -9


def test_kill_9_in_the_middle_of_a_round_resumes_the_same_state_and_prompt(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    with Companion(db).start() as first:
        views = play(first, 9)  # two missions, then seven cards: the second trick is half played
        before = views[-1]
        assert before["status"] == "playing" and before["round"] == 1
        assert before["prompt"]["tap"] and len(before["trick"]) == 3
        first.kill9()
    assert inspect_wal(db) is not None, "a SIGKILL leaves the WAL uncheckpointed: this was a real crash"

    with Companion(db).start() as second:
        after = second.state()
        assert after == before  # every field of the public view, the prompt included
        # And the game goes on from there: the next card completes the trick.
        path, body = next_input(after)
        status, view = second.call("POST", path, body)
        assert status == 200 and view["trick"] == [] and len(view["last_trick"]["cards"]) == 4


def test_every_acknowledged_input_survives_a_kill_9_while_inputs_are_in_flight(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    acked: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (input sent, view answered)
    pending: list[dict[str, Any]] = []
    with Companion(db).start() as first:
        _, view = first.call("POST", "/api/games", START)
        acked.append(({"type": "start", **START}, view))
        stop = threading.Event()

        def hammer() -> None:
            view = acked[-1][1]
            while not stop.is_set():
                path, body = next_input(view)
                pending[:] = [body]
                try:
                    status, view = first.call("POST", path, body)
                except (OSError, http.client.HTTPException):
                    return  # the daemon is gone, maybe halfway through its answer
                assert status == 200, view
                acked.append((body, view))

        thread = threading.Thread(target=hammer, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while len(acked) < 6 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(random.uniform(0, 0.05))  # somewhere inside the next request
        first.kill9()
        stop.set()
        thread.join(timeout=15)
        assert not thread.is_alive()
    assert len(acked) >= 6

    with Companion(db).start() as second:
        events = journal_events(db)
        assert len(events) in (len(acked), len(acked) + 1)
        for (sent, _), event in zip(acked[1:], events[1:], strict=False):
            assert {key: event[key] for key in sent} == sent  # the acknowledged inputs, in order
        if len(events) == len(acked):
            assert second.state() == acked[-1][1]
        else:  # the input in flight was committed before the kill; its answer was lost, not it
            assert {key: events[-1][key] for key in pending[0]} == pending[0]
            assert second.state() != acked[-1][1]


# A torn last write


def test_a_torn_last_write_is_recovered_up_to_the_last_whole_entry_and_doctor_reports_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "journal.db"
    with Companion(db).start() as first:
        views = play(first, 6)
        first.kill9()
    wal = Path(f"{db}-wal")
    whole = inspect_wal(db)
    assert whole is not None and not whole.torn
    # A power cut in the middle of the last write: the WAL ends inside the last input's commit frame.
    os.truncate(wal, wal.stat().st_size - 100)
    torn = inspect_wal(db)
    assert torn is not None and torn.torn and torn.end < torn.size
    size = wal.stat().st_size

    report = doctor("--db", str(db), "--port", str(free_port()))
    assert report.returncode == 0, report.stdout  # a warning, not a failure: nothing shown was lost
    lines = [line for line in report.stdout.splitlines() if line.startswith("warn journal: recovered")]
    assert lines and "the last write was cut off" in lines[0] and "up to entry 6" in lines[0], report.stdout
    assert wal.stat().st_size == size, "doctor must not change the journal"

    with Companion(db).start() as second:
        assert second.state() == views[-2]  # the torn input is gone, everything before it is there
        assert len(journal_events(db)) == 6
        assert "journal recovered after an unclean stop" in second.output()
        assert second.stop() == 0
    report = doctor("--db", str(db), "--port", str(free_port()))
    assert "recovered from a torn write 1 time(s)" in report.stdout, report.stdout
    assert "the last whole entry is 6" in report.stdout


def test_wal_leftovers_of_an_older_generation_are_not_reported_as_torn(tmp_path: Path) -> None:
    """After a checkpoint SQLite rewrites the WAL from its start and leaves older frames behind it."""
    db = tmp_path / "journal.db"
    journal = Journal(db)
    for n in range(40):
        journal.append({"type": "note", "n": n, "pad": "x" * 500}, "t")
    journal._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
    journal.append({"type": "note", "n": 40}, "t")  # restarts the WAL: new salts, old frames behind
    holder = sqlite3.connect(db)  # keeps the WAL from being deleted at close
    holder.execute("SELECT 1 FROM entries").fetchall()
    journal.close()
    report = inspect_wal(db)
    assert report is not None and report.committed_frames >= 1
    assert report.size > report.end  # there are leftovers ...
    assert not report.torn  # ... and they are not a torn write
    holder.close()


# A journal edited by hand


def test_an_entry_that_is_not_json_is_refused_with_its_number_by_the_daemon_and_by_doctor(
    tmp_path: Path,
) -> None:
    db = tmp_path / "journal.db"
    with Companion(db).start() as first:
        play(first, 3)
        assert first.stop() == 0
    with sqlite3.connect(db) as conn:
        conn.execute("""UPDATE entries SET event = '{"type": "tap", "card": ' WHERE seq = 3""")

    with Companion(db) as refused:
        refused.start(wait=False)
        assert refused.process is not None
        assert refused.process.wait(timeout=30) == 2  # a start-up refusal: systemd does not restart it
        assert "entry 3 of the journal" in refused.output() and "not valid JSON" in refused.output()

    report = doctor("--db", str(db), "--port", str(free_port()))
    assert report.returncode == 1
    assert any(
        line.startswith("FAIL journal: entry 3") and "Repairing the journal" in line
        for line in report.stdout.splitlines()
    ), report.stdout


# Journaled and synced before anything is shown; full and read-only disks (in-process)


def new_table(db: Path) -> Table:
    return Table(Journal(db), build_engines(load_catalog()))


def table_input(table: Table, view: dict[str, Any]) -> dict[str, Any]:
    path, body = next_input(view)
    return table.tap(**body) if path == "/api/taps" else table.act(body)


def test_an_input_is_committed_to_the_journal_before_any_listener_hears_of_it(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    table = new_table(db)
    assert table.journal._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert table.journal._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL: fsync per commit
    heard: list[tuple[str, int]] = []

    def listener(kind: str, payload: dict[str, Any]) -> None:
        # Another connection, as after a crash: it sees only what is committed.
        heard.append((kind, len(journal_events(db))))

    table.listeners.append(listener)
    view = table.start("spy-team", PLAYERS)
    for _ in range(5):
        view = table_input(table, view)
    assert [count for kind, count in heard if kind == "state"] == [1, 2, 3, 4, 5, 6]
    assert all(count >= 1 for _, count in heard)  # no cue before the first entry either


def refusal_leaves_everything_as_it_was(table: Table, view: dict[str, Any], db: Path) -> None:
    """Make inputs until the journal refuses one; check that refusal, then return."""
    heard: list[tuple[str, Any]] = []
    table.listeners.append(lambda kind, payload: heard.append((kind, payload)))  # a Cue for "cue"
    for _ in range(400):
        before, entries = table.view(), journal_events(db)
        heard.clear()
        try:
            if before["prompt"]["tap"] and len(entries) % 2:
                table.undo()  # input, undo, input, undo...: the journal grows, the game stays put
            else:
                table_input(table, before)
        except GameError as error:
            assert "could not record" in str(error)
            assert heard == [("cue", heard[0][1])] and heard[0][1].name == "error"  # an error cue only
            assert table.view() == before  # nothing half applied
            assert journal_events(db) == entries  # nothing written, nothing lost
            return
    raise AssertionError("the journal never refused an input")


def test_a_full_disk_refuses_the_input_with_an_error_cue_and_keeps_every_entry(tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    table = new_table(db)
    view = table.start("spy-team", PLAYERS)
    for _ in range(3):
        view = table_input(table, view)
    pages = table.journal._db.execute("PRAGMA page_count").fetchone()[0]
    # SQLite's own size limit: the next page it needs fails with SQLITE_FULL, as on a full disk.
    table.journal._db.execute(f"PRAGMA max_page_count = {pages}")
    refusal_leaves_everything_as_it_was(table, view, db)
    kept = table.view()
    table.journal._db.execute("PRAGMA max_page_count = 1073741823")  # room again
    after = table_input(table, kept)
    assert after != kept
    table.journal.close()
    assert new_table(db).view() == after


def test_a_read_only_journal_refuses_the_input_with_an_error_cue_and_keeps_every_entry(
    tmp_path: Path,
) -> None:
    db = tmp_path / "journal.db"
    table = new_table(db)
    view = table.start("spy-team", PLAYERS)
    for _ in range(3):
        view = table_input(table, view)
    # SQLITE_READONLY, the error a database on a read-only mount gives (tested for real below).
    table.journal._db.execute("PRAGMA query_only = ON")
    refusal_leaves_everything_as_it_was(table, view, db)
    table.journal.close()
    assert new_table(db).view() == table.view()


def test_a_journal_that_cannot_be_written_is_a_journal_error(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.db")
    journal._db.execute("PRAGMA query_only = ON")
    with pytest.raises(JournalError, match="could not record the input"):
        journal.append({"type": "note"}, "t")


# Full and read-only filesystems, for real (tmpfs mounts)


@contextmanager
def mount(target: Path, *options: str) -> Iterator[None]:
    """`mount OPTIONS... TARGET` for the block, `umount TARGET` after it."""
    target.mkdir(parents=True, exist_ok=True)
    command = ["mount", *options, str(target)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        message = f"cannot mount here ({' '.join(command)}: {result.stderr.strip()})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}: CI runs as root with CAP_SYS_ADMIN")
        pytest.skip(message)
    try:
        yield
    finally:
        if subprocess.run(["umount", str(target)], capture_output=True, timeout=30).returncode:
            subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30)


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make `folder` read-only, as a kernel does with a failing SD card: a read-only bind mount on
    top of it, removed afterwards."""
    with mount(folder, "--bind", str(folder)):
        result = subprocess.run(
            ["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True, timeout=30
        )
        assert result.returncode == 0, result.stderr
        yield


def fill(folder: Path) -> Path:
    """Fill the filesystem to the last byte."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        for size in (65536, 4096, 1):
            block = b"\0" * size
            try:
                while out.write(block):
                    pass
            except OSError:  # ENOSPC
                pass
    return filler


def test_a_really_full_disk_refuses_input_keeps_the_journal_and_recovers_when_space_is_back(
    tmp_path: Path,
) -> None:
    disk = tmp_path / "disk"
    with mount(disk, "-t", "tmpfs", "-o", "size=2m", "tmpfs"):
        db = disk / "journal.db"
        with Companion(db, log=tmp_path / "full.log").start() as server:
            views = play(server, 5)
            filler = fill(disk)
            for _ in range(3):
                path, body = next_input(views[-1])
                status, answer = server.call("POST", path, body)
                assert status == 409 and "could not record" in answer["error"], answer
                assert server.state() == views[-1]
            report = doctor("--db", str(db), "--port", str(free_port()))
            assert "FAIL disk:" in report.stdout and report.returncode == 1, report.stdout
            filler.unlink()  # space again: the same input is accepted, no restart needed
            path, body = next_input(views[-1])
            status, answer = server.call("POST", path, body)
            assert status == 200, answer
            views.append(answer)
            server.kill9()
        with Companion(db, log=tmp_path / "full.log").start() as server:
            assert server.state() == views[-1]
            assert len(journal_events(db)) == len(views)


@pytest.mark.parametrize("stop", ["kill -9", "clean stop"])
def test_a_read_only_disk_shows_the_game_refuses_every_input_and_loses_nothing(
    tmp_path: Path, stop: str
) -> None:
    disk = tmp_path / "disk"
    with mount(disk, "-t", "tmpfs", "-o", "size=4m", "tmpfs"):
        db = disk / "journal.db"
        log = tmp_path / "ro.log"
        with Companion(db, log=log).start() as server:
            views = play(server, 5)
            if stop == "kill -9":  # the SD card failed while the daemon ran: the WAL is still there
                server.kill9()
            else:
                assert server.stop() == 0
        with read_only(disk), Companion(db, log=log).start() as server:
            assert server.state() == views[-1]
            for _ in range(2):
                path, body = next_input(views[-1])
                status, answer = server.call("POST", path, body)
                assert status == 409 and "could not record" in answer["error"], answer
                assert server.state() == views[-1]
            assert "read-only disk" in server.output()
            status, health = server.call("GET", "/healthz")
            assert (status, health["ok"], health["journal_read_only"]) == (503, False, True)
            report = doctor("--db", str(db), "--port", str(free_port()))
            assert "FAIL journal: the disk holding" in report.stdout, report.stdout
            assert server.stop() == 0
        with Companion(db, log=log).start() as server:  # writable again: nothing was lost
            assert server.state() == views[-1]
            path, body = next_input(views[-1])
            assert server.call("POST", path, body)[0] == 200
