"""Fuzz a real daemon over HTTP: N random requests over every route (tests/fuzzing.py), counting the
answers by status, half of them with a pairing code live (issue 25). Goal (issue 13): 0 answers
5xx, the daemon still answering at the end, and no refused request (4xx) changing the table's state
or its journal.

    .venv/bin/python bench/fuzz_api.py [--examples 10000]

The daemon is `companion run` (waitress, mock pins, a fresh journal) in another process; requests
go over loopback with http.client, one connection each. CI runs a small in-process sample of the
same requests (tests/web/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzzing import requests
from tests.servers import TOKEN, running_companion


def not_text_body(body: bytes | None) -> bool:
    """A body whose JSON holds a lone surrogate, escaped or as raw bytes."""
    try:
        text = json.dumps(json.loads(body or b"null"))  # escapes every surrogate as \\udXXX
    except (ValueError, RecursionError):
        return False
    return any(f"\\u{high}" in text.lower() for high in ("d8", "d9", "da", "db", "dc", "dd", "de", "df"))


def new_pairing_code(port: int) -> None:
    """Make a pairing code live, as `companion pair` does (over loopback, with the token)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("POST", "/api/pairing", headers={"Authorization": f"Bearer {TOKEN}"})
    assert connection.getresponse().status == 201
    connection.close()


def send(port: int, request: dict[str, Any]) -> int:
    if request.get("live_code"):
        new_pairing_code(port)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest(request["method"], request["path"], skip_host="Host" in request["headers"])
        for name, value in request["headers"].items():
            connection.putheader(name, value.encode("utf-8"))
        body = request["body"] or b""
        if body or request["method"] in ("POST", "PUT", "PATCH"):
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body or None)
        response = connection.getresponse()
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            response.read1(1024)  # a stream is not read to its end
        else:
            response.read()
        return response.status
    finally:
        connection.close()


def snapshot(port: int) -> tuple[str, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/api/state")
    state = connection.getresponse().read().decode()
    connection.close()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/healthz")
    health = json.loads(connection.getresponse().read())
    connection.close()
    return state, str(health.get("journal"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    args = parser.parse_args()
    statuses: Counter[int] = Counter()
    changed_by_refusal: list[dict[str, Any]] = []
    live_pairs: Counter[str] = Counter()  # pairing attempts while a code was live, by kind of body
    with tempfile.TemporaryDirectory() as folder, running_companion(Path(folder) / "journal.db") as server:
        started = time.monotonic()

        @settings(
            max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        @given(requests(TOKEN))
        def one(request: dict[str, Any]) -> None:
            before = snapshot(server.port)
            status = send(server.port, request)
            statuses[status] += 1
            if request.get("live_code") and request["path"] == "/api/pair" and request["method"] == "POST":
                live_pairs["not text" if not_text_body(request["body"]) else "text"] += 1
            if 400 <= status < 500 and snapshot(server.port) != before:
                changed_by_refusal.append(request)

        one()
        alive = snapshot(server.port)[1] == "ok"
        seconds = time.monotonic() - started
    total = sum(statuses.values())
    five = sum(n for status, n in statuses.items() if status >= 500)
    print(f"{total} requests in {seconds:.0f} s: {five} answered 5xx; daemon still answering: {alive}")
    print(f"refusals that changed the state: {len(changed_by_refusal)}")
    print(f"pairing attempts with a code live: {live_pairs.total()} ({live_pairs['not text']} not text)")
    print("by status: " + ", ".join(f"{status}: {n}" for status, n in sorted(statuses.items())))
    return 0 if five == 0 and alive and not changed_by_refusal else 1


if __name__ == "__main__":
    sys.exit(main())
