"""Input -> SSE message at many scoreboards: p50 / p95 / max and messages missed (issue 12).

    .venv/bin/python bench/sse_fanout.py [--clients 32] [--inputs 100] [--rounds 3]

The daemon is `companion run` (waitress, journal with fsync, mock pins) in its own process. Each
scoreboard is an EventSource-like client in a process of its own (it reads the stream as text and
parses each `data:` line as JSON, as a browser does), from its own loopback address (127.0.1.N:
the daemon's per-address share applies as it would to tablets). The driver, in this process, makes
one input at a time over the API, waits 30 ms, makes the next.

The input is a game start (`POST /api/games` with a player named after the input's number): it
takes the very path of a tap (Table.submit: journal append + fsync, fold, listeners). Latency is
from just before the request is sent to the moment a client has parsed the state naming it.
Clocks are `time.monotonic()`, system-wide on Linux, so the processes compare directly.

Beside it, in the same run and interleaved block by block, the floor: the same inputs with no
scoreboard connected, timed to the API's answer (what the input costs without any stream). Each
round is one block without clients, then one with them.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.servers import TOKEN, running_companion


def scoreboard(port: int, source: str, ready: Any, results: Any, stop: Any) -> None:
    """One tablet: read the stream, note when each input's state arrives."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60, source_address=(source, 0))
    connection.request("GET", "/api/events", headers={"Accept": "text/event-stream"})
    response = connection.getresponse()
    seen: dict[str, float] = {}
    buffer = b""
    ready.put(source)
    while not stop.is_set():
        chunk = response.read1(65536)
        if not chunk:
            break
        now = time.monotonic()
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.startswith(b"data: {"):
                players = json.loads(line[6:]).get("players") or []
                if players and players[0]["name"].startswith("I"):
                    seen.setdefault(players[0]["name"], now)
            elif line.startswith(b"event: busy"):
                results.put((source, None))
                return
    results.put((source, seen))


def make_input(port: int, n: int) -> tuple[float, float]:
    """Start a game whose first player is named after `n`; (sent at, answered at)."""
    body = json.dumps({"game": "spy", "players": [f"I{n}", "Bob"]})
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    sent = time.monotonic()
    connection.request(
        "POST", "/api/games", body, {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    )
    response = connection.getresponse()
    response.read()
    answered = time.monotonic()
    connection.close()
    assert response.status == 201, response.status
    return sent, answered


def block(port: int, first: int, inputs: int, clients: int) -> tuple[list[float], list[float], int]:
    """`inputs` inputs with `clients` scoreboards: (API answer ms, SSE arrival ms, messages missed)."""
    context = multiprocessing.get_context("spawn")
    ready, results, stop = context.Queue(), context.Queue(), context.Event()
    processes = [
        context.Process(target=scoreboard, args=(port, f"127.0.1.{i + 1}", ready, results, stop), daemon=True)
        for i in range(clients)
    ]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=60)
    time.sleep(0.5)  # every stream past its first state
    sent: dict[str, float] = {}
    answers = []
    for n in range(first, first + inputs):
        at, answered = make_input(port, n)
        sent[f"I{n}"] = at
        answers.append((answered - at) * 1000)
        time.sleep(0.03)
    time.sleep(1.0)
    stop.set()
    make_input(port, 10**6)  # wakes every reader so it sees `stop`
    arrivals, missed = [], 0
    for _ in processes:
        _source, seen = results.get(timeout=60)
        if seen is None:
            missed += inputs  # refused: every message missed
            continue
        for name, at in sent.items():
            if name in seen:
                arrivals.append((seen[name] - at) * 1000)
            else:
                missed += 1
    for process in processes:
        process.join(timeout=10)
    return answers, arrivals, missed


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"{statistics.median(ordered):.1f} / {p95:.1f} / {ordered[-1]:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--inputs", type=int, default=100, help="inputs per block")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    floor_answers: list[float] = []
    answers: list[float] = []
    arrivals: list[float] = []
    missed = 0
    with tempfile.TemporaryDirectory() as folder, running_companion(Path(folder) / "journal.db") as server:
        n = 0
        for _ in range(args.rounds):
            bare, _, _ = block(server.port, n, args.inputs, 0)
            floor_answers += bare
            n += args.inputs
            got_answers, got_arrivals, got_missed = block(server.port, n, args.inputs, args.clients)
            answers += got_answers
            arrivals += got_arrivals
            missed += got_missed
            n += args.inputs
    sent = args.rounds * args.inputs * args.clients
    print(f"{args.rounds} rounds x {args.inputs} inputs; {args.clients} scoreboards in their own processes")
    print("ms, p50 / p95 / max:")
    print(f"  floor: API answer, no scoreboard        {summary(floor_answers)}")
    print(f"  API answer, {args.clients} scoreboards            {summary(answers)}")
    print(f"  SSE message at a scoreboard            {summary(arrivals)}")
    print(f"  messages missed: {missed} of {sent}")
    if floor_answers and arrivals:
        ratio = statistics.median(arrivals) / statistics.median(floor_answers)
        print(f"  SSE median / floor median: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
