"""What the power-cut run (tests/power_cuts.py) asks of the daemon: a script of operations of every
kind of write the table makes, and the thread that sends them until the power goes.

The script is drawn block by block from a seeded random generator, and is the same however the
cuts fall, so a run goes on after a cut exactly where it stopped:

- `start`: a game start, which moves the finished games into the archive (both journal files);
- `game`: a whole game of SPY (a start and eight inputs), whose last input (`game-over`) puts its
  result into the MQTT outbox;
- `pair`: a control device paired (the paired devices' file);
- `enroll`: two tags tapped in an enrollment session (the card registry);
- `import`: a box of three tags imported (the card registry, in one transaction).

Every journal input carries its own Idempotency-Key. What was acknowledged (its answer arrived) is
kept in `Model`: the run checks what survives a cut against it.
"""

from __future__ import annotations

import http.client
import json
import random
import sqlite3
import threading
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.webapp.pairing import MAX_DEVICES
from tests.servers import TOKEN, Server

AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
JOURNALED = ("start", "game", "game-over")
# Two players of SPY; Bob (seat 1) wins (the game of tests/web/test_spy_api.py).
SPY_GAME: list[tuple[str, dict[str, Any]]] = [
    *(("/api/taps", {"card": f"spy/{card}"}) for card in ("green-spy", "red-spy", "green-top-secret-2")),
    *(("/api/taps", {"card": f"spy/{card}"}) for card in ("red-bomb-2-extra", "green-safe-1")),
    ("/api/actions", {"type": "pass"}),
    *(("/api/taps", {"card": f"spy/{card}"}) for card in ("green-bomb-1", "red-bomb-2-extra")),
]
IMPORTED = ("spy/red-spy", "spy/green-bomb-1", "spy/red-safe-2")


def read_only(path: Path) -> closing[sqlite3.Connection]:
    """A read-only connection to a database, closed at the end of its `with` (an sqlite3
    connection is not closed by its own `with`, and a file left open holds up a cut's unmount)."""
    return closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True))


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


@dataclass
class Op:
    kind: str  # "start", "game", "game-over", "pair", "enroll", "import": what it writes
    n: int  # its place in the script
    path: str = ""
    body: Any = None
    players: tuple[str, ...] = ()  # game-over: the players of its game (its result names them)
    end: bool = False  # enroll: the last tap of its session, which it then stops
    card: str | None = None  # enroll: the card the session offered when the tag was sent

    @property
    def key(self) -> dict[str, str]:
        return {"Idempotency-Key": f"op-{self.n}"}

    @property
    def tags(self) -> dict[str, str]:
        """The tags it registers (an enroll's only once its card is known)."""
        if self.kind == "import":
            return {tag["uid"]: tag["card"] for tag in self.body["tags"]}
        if self.kind == "enroll" and self.card is not None:
            return {self.body["uid"]: self.card}
        return {}


class Script:
    """The operations, drawn a block at a time as far as the run gets."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.ops: list[Op] = []

    def __getitem__(self, index: int) -> Op:
        while len(self.ops) <= index:
            self._block(self.rng.choice(("start", "start", "game", "pair", "enroll", "import")))
        return self.ops[index]

    def _block(self, kind: str) -> None:
        n = len(self.ops)
        players = [f"Ann{n}", f"Bob{n}"]
        if kind == "start":
            self.ops.append(Op("start", n, "/api/games", {"game": "spy", "players": players}))
        elif kind == "game":
            body = {"game": "spy", "players": players, "options": {"start": 1}}
            self.ops.append(Op("start", n, "/api/games", body))
            for i, (path, step) in enumerate(SPY_GAME, start=1):
                over = i == len(SPY_GAME)
                self.ops.append(Op("game-over" if over else "game", n + i, path, step, tuple(players)))
        elif kind == "pair":
            self.ops.append(Op("pair", n))
        elif kind == "enroll":
            for i in range(2):
                self.ops.append(Op("enroll", n + i, body={"uid": f"04{n + i:08x}ee"}, end=i == 1))
        else:
            tags = [{"uid": f"04{n:08x}{i:02x}", "card": card} for i, card in enumerate(IMPORTED)]
            self.ops.append(Op("import", n, "/api/cards/import", {"version": 1, "tags": tags}))


@dataclass
class Model:
    """What the daemon acknowledged: what must survive any cut."""

    view: Any = None  # the answer to the last journal input (the idle table's view at first)
    inputs: list[Op] = field(default_factory=list)  # the journal inputs, in order
    tags: dict[str, str] = field(default_factory=dict)  # the card registry, UID -> card
    devices: list[str] = field(default_factory=list)  # cookies of the paired devices not unpaired since
    finished: set[tuple[str, ...]] = field(default_factory=set)  # the players of each game played out
    acknowledged: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)


def perform(server: Server, op: Op, model: Model) -> bool:
    """Send `op` and note what was acknowledged; False (and a problem) for an answer that is no
    success. A dead daemon raises OSError or HTTPException instead."""
    if op.kind in JOURNALED:
        done = _input(server, op, model)
    elif op.kind == "pair":
        done = _pair(server, model)
    elif op.kind == "enroll":
        done = _enroll(server, op, model)
    else:
        done = _import(server, op, model)
    if done:
        model.acknowledged[op.kind] += 1
    return done


def _input(server: Server, op: Op, model: Model) -> bool:
    status, answer, _ = request(server, "POST", op.path, op.body, op.key)
    if status not in (200, 201):
        model.problems.append(f"{op.kind} #{op.n} answered {status}: {answer}")
        return False
    model.inputs.append(op)
    model.view = answer
    if op.kind == "game-over":
        model.finished.add(op.players)
    return True


def _pair(server: Server, model: Model) -> bool:
    if len(model.devices) >= MAX_DEVICES - 8:  # below the 32 the table keeps, with room for
        model.devices.clear()  # pairings a cut took the answer of (and forgotten before asked)
        request(server, "DELETE", "/api/pairing")
    _, answer, _ = request(server, "POST", "/api/pairing")
    code = {"code": answer["code"]}
    status, _, cookie = request(server, "POST", "/api/pair", code, {"Authorization": ""})
    if status != 200 or not cookie:
        model.problems.append(f"pairing answered {status}")
        return False
    model.devices.append(cookie.split(";", 1)[0])
    return True


def _enroll(server: Server, op: Op, model: Model) -> bool:
    _, answer, _ = request(server, "GET", "/api/cards/session")
    progress = answer["session"]
    if progress is None or progress["finished"]:
        _, answer, _ = request(server, "POST", "/api/cards/session", {"game": "spy"})
        progress = answer["session"]
    op.card = progress["current"]["id"]
    status, answer, _ = request(server, "POST", "/api/cards/session/tap", op.body)
    result = answer.get("result") or {} if isinstance(answer, dict) else {}
    if status != 200 or result.get("status") != "enrolled" or result.get("card") != op.card:
        model.problems.append(f"enroll #{op.n} answered {status}: {answer}")
        return False
    model.tags.update(op.tags)
    if op.end:
        request(server, "DELETE", "/api/cards/session")  # the game's taps reach the game again
    return True


def _import(server: Server, op: Op, model: Model) -> bool:
    status, answer, _ = request(server, "POST", op.path, op.body)
    if (
        status != 200
        or answer.get("refused")
        or len(answer.get("added", [])) + len(answer.get("unchanged", [])) != len(op.tags)
    ):
        model.problems.append(f"import #{op.n} answered {status}: {answer}")
        return False
    model.tags.update(op.tags)
    return True


def retry(server: Server, op: Op, model: Model) -> bool:
    """After the restart, the operation whose answer the cut took, as a client would retry it:
    a journal input with its key (applied once whether or not the disk kept it), a tag by the
    single-tag call (the session died with the daemon), an import as it was (all or none of it
    survived), a pairing anew."""
    if op.kind == "enroll" and op.card is not None:
        status, answer, _ = request(server, "POST", "/api/cards/enroll", {**op.body, "card": op.card})
        if status != 201:
            model.problems.append(f"the retry of enroll #{op.n} answered {status}: {answer}")
            return False
        model.tags.update(op.tags)
        model.acknowledged["enroll"] += 1
        return True
    return perform(server, op, model)


class Sender:
    """Sends the script from `first` on until the daemon dies; `in_flight` is the operation sent
    whose answer had not arrived, `next` the one after the last acknowledged."""

    def __init__(self, server: Server, script: Script, first: int, model: Model) -> None:
        self.server = server
        self.script = script
        self.next = first
        self.model = model
        self.in_flight: Op | None = None
        self.acknowledged = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while True:
                op = self.in_flight = self.script[self.next]
                if not perform(self.server, op, self.model):
                    return
                self.acknowledged += 1
                self.in_flight, self.next = None, self.next + 1
        except (OSError, http.client.HTTPException):
            return  # the power went
