"""Power cuts at random moments under an unmodified `companion run`, on tests/lazyfs.py: for
tests/table/test_power_cut.py (a short run) and bench/power_cuts.py (a long one).

Each round starts the daemon on what the last cut left, checks it, sends inputs from another thread
and cuts the power at a random moment: SIGKILL, then every unsynced write dropped. The inputs are
game starts (each moves the finished games into the archive file: the journal's two files are
written by each), each with its own Idempotency-Key, and a control device paired now and then. An
input is acknowledged when its answer arrived. Checked after each cut, on what survived:

- the state is that of the last acknowledged input, or of the one in flight at the cut;
- the input in flight, retried with its key, is applied once (and answered as done if it was);
- every device whose pairing was acknowledged is still paired (the run unpairs them all now and then:
  the table keeps the newest 32);

and at the end, on the journal's files: every acknowledged input is there exactly once, in order,
nothing that was never sent, and SQLite's integrity_check is clean on each file.
"""

from __future__ import annotations

import http.client
import json
import random
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.table.journal import Journal
from companion.webapp.pairing import MAX_DEVICES
from tests.lazymount import LazyMount
from tests.servers import TOKEN, Server, running_companion

AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


@dataclass
class Report:
    cuts: int = 0
    acknowledged: list[int] = field(default_factory=list)  # the numbers of the acknowledged starts
    in_flight_kept: int = 0  # inputs cut before their answer that the disk had all the same
    retried: int = 0
    paired: int = 0
    problems: list[str] = field(default_factory=list)


def request(
    server: Server, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> Any:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        data = None if body is None else json.dumps(body)
        connection.request(method, path, body=data, headers={**AUTH, **(headers or {})})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null"), response.getheader("Set-Cookie")
    finally:
        connection.close()


def start(n: int) -> dict[str, Any]:
    return {"game": "spy", "players": [f"Ann{n}", f"Bob{n}"]}


class Sender:
    """Sends starts one after the other until the daemon dies; remembers what was answered."""

    def __init__(self, server: Server, first: int, devices: list[str]) -> None:
        self.server = server
        self.next = first
        self.acknowledged: list[int] = []
        self.in_flight: int | None = None
        self.devices = devices  # the cookies of the devices paired and not unpaired since
        self.paired = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while True:
                n, self.in_flight = self.next, self.next
                key = {"Idempotency-Key": f"s-{n}"}
                status, _, _ = request(self.server, "POST", "/api/games", start(n), key)
                if status != 201:
                    return
                self.acknowledged.append(n)
                self.in_flight, self.next = None, n + 1
                if n % 3 == 0:
                    self._pair()
        except (OSError, http.client.HTTPException):
            return  # the power went

    def _pair(self) -> None:
        if len(self.devices) >= MAX_DEVICES - 8:  # below the 32 the table keeps, with room for
            self.devices.clear()  # pairings a cut took the answer of (and forgotten before asked)
            request(self.server, "DELETE", "/api/pairing")
        _, answer, _ = request(self.server, "POST", "/api/pairing")
        code = {"code": answer["code"]}
        status, _, cookie = request(self.server, "POST", "/api/pair", code, {"Authorization": ""})
        if status == 200 and cookie:
            self.devices.append(cookie.split(";", 1)[0])
            self.paired += 1


def run(folder: Path, cuts: int, seed: int) -> Report:
    rng = random.Random(seed)
    report = Report()
    devices: list[str] = []
    next_n, in_flight = 0, None
    with LazyMount(folder) as lazy:
        db = lazy.mountpoint / "journal.db"
        for _ in range(cuts + 1):
            with running_companion(db) as server:
                _check_restart(server, report, devices, in_flight)
                if in_flight is not None:  # the retry of the input whose answer the cut took
                    key = {"Idempotency-Key": f"s-{in_flight}"}
                    status, _, _ = request(server, "POST", "/api/games", start(in_flight), key)
                    if status != 201:
                        report.problems.append(f"the retry of start {in_flight} answered {status}")
                    report.acknowledged.append(in_flight)
                    report.retried += 1
                    next_n = in_flight + 1
                if report.cuts == cuts:
                    break
                sender = Sender(server, next_n, devices)
                sender.thread.start()
                some = rng.randint(1, 4)
                _wait_for(lambda s=sender, k=some: len(s.acknowledged) >= k, f"{some} acknowledged inputs")
                threading.Event().wait(rng.uniform(0, 0.03))  # a random moment: the cut's, not a wait
                server.process.kill()
                server.process.wait()
                sender.thread.join(timeout=15)
                report.acknowledged += sender.acknowledged
                report.paired += sender.paired
                next_n, in_flight = sender.next, sender.in_flight
                lazy.cut()
                report.cuts += 1
        _check_files(db, report)
    return report


def _check_restart(server: Server, report: Report, devices: list[str], in_flight: int | None) -> None:
    _, view, _ = request(server, "GET", "/api/state")
    names = [player["name"] for player in view.get("players", [])]
    allowed = [start(n)["players"] for n in ([report.acknowledged[-1]] if report.acknowledged else [])]
    if in_flight is not None:
        allowed.append(start(in_flight)["players"])
        if names == start(in_flight)["players"]:
            report.in_flight_kept += 1
    if (allowed or names) and names not in allowed:
        report.problems.append(f"after cut {report.cuts}: the table shows {names}, not one of {allowed}")
    for cookie in devices:
        _, answer, _ = request(server, "GET", "/api/pair", headers={"Authorization": "", "Cookie": cookie})
        if not answer.get("paired"):
            report.problems.append(f"after cut {report.cuts}: a paired device was forgotten")


def _check_files(db: Path, report: Report) -> None:
    journal = Journal(db, read_only=True)
    try:
        numbers = [int(entry.event["players"][0].removeprefix("Ann")) for entry in journal.entries()]
    finally:
        journal.close()
    if numbers != sorted(set(numbers)):
        report.problems.append(f"an input journaled twice or out of order: {numbers}")
    if numbers != report.acknowledged:
        missing = sorted(set(report.acknowledged) - set(numbers))
        extra = sorted(set(numbers) - set(report.acknowledged))
        report.problems.append(f"acknowledged but lost: {missing}; journaled, never acknowledged: {extra}")
    for path in (db, db.with_name("journal-archive.db")):
        if path.exists():
            with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as connection:
                verdict = connection.execute("PRAGMA integrity_check").fetchone()[0]
            if verdict != "ok":
                report.problems.append(f"{path.name}: integrity_check says {verdict}")


def _wait_for(check: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)
