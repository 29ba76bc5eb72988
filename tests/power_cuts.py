"""Power cuts at random moments under an unmodified `companion run`, on tests/lazyfs.py: for
tests/table/test_power_cut.py (a short run) and bench/power_cuts.py (a long one).

Each round starts the daemon on what the last cut left, checks it, sends the operations of
tests/power_cut_work.py from another thread (game starts that archive, whole games whose result
goes through the MQTT outbox, pairings, enrollment taps, imports) and cuts the power at a random
moment: SIGKILL, then every unsynced write dropped. In about half the rounds the broker is stopped,
so the results of the games finished then still wait in the outbox at the cut (the subscriber's
session is kept by the broker meanwhile). Checked after each cut, on what survived, against what
was acknowledged:

- the table's view is the answer to the last acknowledged input, or to the one in flight at the
  cut; that one, retried with its Idempotency-Key, is applied once (answered as done if it was);
- the card registry holds every acknowledged tag and nothing else, but for the operation in flight
  (a whole import or none of it);
- every device whose pairing was acknowledged is still paired;

and at the end: every acknowledged input is in the journal exactly once, in order, nothing never
sent is; every game played out has its result at the broker (and nothing else does), none left
unsent in the outbox; SQLite's integrity_check is clean on every database file.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.table.journal import Journal
from tests.lazymount import LazyMount
from tests.mosquitto import MOSQUITTO, Broker, Listener
from tests.power_cut_work import Model, Op, Script, Sender, read_only, request, retry
from tests.servers import Server, running_companion

TABLE = "cuts"
KINDS = ("start", "game", "game-over", "pair", "enroll", "import")


@dataclass
class Report:
    cuts: int = 0
    cut_during: Counter[str] = field(default_factory=Counter)  # the kind of operation in flight
    acknowledged: Counter[str] = field(default_factory=Counter)  # per kind, retries included
    in_flight_kept: int = 0  # operations cut before their answer that the disk had all the same
    retried: int = 0
    away: int = 0  # rounds with the broker stopped (the results wait in the outbox)
    results: int = 0  # games played out whose result reached the broker
    duplicates: int = 0  # results heard again (a stable id: harmless, docs/mqtt.md)
    problems: list[str] = field(default_factory=list)

    @property
    def inputs(self) -> int:
        return sum(self.acknowledged[kind] for kind in ("start", "game", "game-over"))


def run(folder: Path, cuts: int, seed: int, mqtt: bool = True) -> Report:
    rng = random.Random(seed)
    report, model, script = Report(), Model(), Script(random.Random(seed + 1))
    with LazyMount(folder) as lazy, broker(folder / "broker", mqtt) as (mosquitto, heard):
        db = lazy.mountpoint / "journal.db"
        config = folder / "companion.toml"
        config.write_text(f'[mqtt]\nurl = "{mosquitto.url}"\ntable = "{TABLE}"\n' if mosquitto else "")
        next_op, in_flight = 0, None
        for _ in range(cuts + 1):
            with running_companion(db, "--config", str(config)) as server:
                if model.view is None:
                    model.view = request(server, "GET", "/api/state")[1]
                next_op = _after_restart(server, model, in_flight, report, next_op)
                if report.cuts == cuts:
                    _check_now(server, model, report, "at the end")
                    if heard is not None:
                        _check_results(db, model, heard, report)
                    break
                away = mosquitto is not None and rng.random() < 0.5
                if away:
                    mosquitto.stop()
                    report.away += 1
                next_op, in_flight = _round(server, script, next_op, model, rng)
            lazy.cut()
            if away:
                mosquitto.start()  # after the cut: the results of the round waited in the outbox
            report.cuts += 1
        _check_files(db, model, report)
    report.acknowledged = model.acknowledged
    report.problems = model.problems + report.problems
    return report


def _round(server: Server, script: Script, first: int, model: Model, rng: random.Random) -> Any:
    """Operations until the power goes at a random moment; (the next to send, the one in flight)."""
    sender = Sender(server, script, first, model)
    sender.thread.start()
    some, target = rng.randint(1, 4), rng.choice(KINDS)
    _wait_for(lambda: sender.acknowledged >= some or not sender.thread.is_alive(), f"{some} answers")
    # Cut while an operation of the kind drawn is under way, if one comes within a dozen more.
    _wait_for(
        lambda: (
            _kind(sender.in_flight) == target
            or sender.acknowledged >= some + 12
            or not sender.thread.is_alive()
        ),
        target,
    )
    threading.Event().wait(rng.uniform(0, 0.01))  # a random moment: the cut's, not a wait
    server.process.kill()
    server.process.wait()
    sender.thread.join(timeout=15)
    return sender.next, sender.in_flight


def _kind(op: Op | None) -> str | None:
    return None if op is None else op.kind


def _after_restart(server: Server, model: Model, op: Op | None, report: Report, next_op: int) -> int:
    """Check what survived the cut, retry what was in flight; the next operation to send."""
    _, view, _ = request(server, "GET", "/api/state")
    tags = _tags(server)
    for cookie in model.devices:
        _, answer, _ = request(server, "GET", "/api/pair", headers={"Authorization": "", "Cookie": cookie})
        if not answer.get("paired"):
            report.problems.append(f"after cut {report.cuts}: a paired device was forgotten")
    if op is None:
        if report.cuts:  # (not the first start, which follows no cut)
            report.cut_during["none"] += 1  # the cut fell between two operations
        _compare(view, tags, [model.view], [model.tags], report, "no operation in flight")
        return next_op
    report.cut_during[op.kind] += 1
    before_view, before_tags = model.view, dict(model.tags)
    allowed_tags = [before_tags, {**before_tags, **op.tags}] if op.tags else [before_tags]
    if retry(server, op, model):  # applied once whether the disk kept it or not
        report.retried += 1
    allowed_views = [before_view, model.view]
    _compare(view, tags, allowed_views, allowed_tags, report, f"{op.kind} #{op.n} in flight")
    if (view, tags) != (before_view, before_tags):
        report.in_flight_kept += 1
    return op.n + 1


def _compare(view: Any, tags: Any, views: list[Any], registries: list[Any], report: Report, why: str) -> None:
    if view not in views:
        names = [player["name"] for player in view.get("players", [])]
        report.problems.append(
            f"after cut {report.cuts} ({why}): the table shows {names}, not as acknowledged"
        )
    if tags not in registries:
        lost, extra = sorted(set(registries[0]) - set(tags)), sorted(set(tags) - set(registries[-1]))
        report.problems.append(
            f"after cut {report.cuts} ({why}): tags lost {lost}, never acknowledged {extra}"
        )


def _check_now(server: Server, model: Model, report: Report, when: str) -> None:
    view = request(server, "GET", "/api/state")[1]
    _compare(view, _tags(server), [model.view], [model.tags], report, when)


def _tags(server: Server) -> dict[str, str]:
    _, export, _ = request(server, "GET", "/api/cards/export")
    return {tag["uid"]: tag["card"] for tag in export["tags"]}


def _check_results(db: Path, model: Model, heard: Listener, report: Report) -> None:
    """Every game played out has its result at the broker, nothing else does, the outbox is empty."""
    topic = f"companion/{TABLE}/result"

    def games() -> list[Any]:
        return [m.json() for m in heard.on(topic) if m.json().get("kind") == "game"]

    def players() -> set[tuple[str, ...]]:
        return {tuple(p["name"] for p in result["players"]) for result in games()}

    try:
        heard.wait(lambda: model.finished <= players(), timeout=60)
        _wait_for(lambda: _unsent(db.with_name("outbox.db")) == 0, "the outbox to empty", 60)
    except AssertionError as error:
        report.problems.append(f"results: {error}")
    if players() != model.finished:
        missing, extra = model.finished - players(), players() - model.finished
        report.problems.append(
            f"results missing for {sorted(missing)}; of games never finished: {sorted(extra)}"
        )
    report.results = len(players())
    report.duplicates = len(games()) - len({result["id"] for result in games()})


def _unsent(outbox: Path) -> int:
    with read_only(outbox) as connection:
        return int(connection.execute("SELECT count(*) FROM results WHERE sent = 0").fetchone()[0])


def _check_files(db: Path, model: Model, report: Report) -> None:
    journal = Journal(db, read_only=True)
    try:
        events = [entry.event for entry in journal.entries()]
    finally:
        journal.close()
    posted = [op.body for op in model.inputs]
    journaled = [{key: event.get(key) for key in body} for event, body in zip(events, posted, strict=False)]
    if len(events) != len(posted) or journaled != posted:
        first = next(
            (i for i, pair in enumerate(zip(journaled, posted, strict=False)) if pair[0] != pair[1]), None
        )
        report.problems.append(
            f"the journal holds {len(events)} inputs, {len(posted)} acknowledged; first difference at {first}"
        )
    for path in sorted(db.parent.glob("*.db")):
        with read_only(path) as connection:
            verdict = connection.execute("PRAGMA integrity_check").fetchone()[0]
        if verdict != "ok":
            report.problems.append(f"{path.name}: integrity_check says {verdict}")


@contextmanager
def broker(folder: Path, wanted: bool) -> Iterator[tuple[Broker | None, Listener | None]]:
    """A real Mosquitto and a subscriber to the table's results, or (None, None) without MQTT."""
    if not wanted or not MOSQUITTO:
        with nullcontext():
            yield None, None
        return
    mosquitto = Broker(folder)
    mosquitto.start()
    heard = Listener(mosquitto, f"companion/{TABLE}/result", persistent=True)
    try:
        yield mosquitto, heard
    finally:
        heard.close()
        mosquitto.stop()


def _wait_for(check: Callable[[], Any], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)
