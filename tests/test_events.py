"""The event broker: every change reaches every scoreboard, and open streams never starve the API."""

from __future__ import annotations

import http.client
import threading
from pathlib import Path

from companion.events import Broker
from tests.servers import running_companion


def test_each_stream_starts_with_the_current_state_then_follows() -> None:
    broker = Broker()
    stream = broker.stream({"status": "idle"}, keepalive=0.01)
    assert next(stream) == "retry: 2000\n\n"
    assert next(stream) == 'event: state\ndata: {"status":"idle"}\n\n'
    broker("cue", {"cue": "error"})
    assert next(stream) == 'event: cue\ndata: {"cue":"error"}\n\n'
    assert next(stream) == ": keepalive\n\n"


def test_a_new_stream_beyond_the_cap_ends_the_oldest() -> None:
    broker = Broker(max_clients=2)
    streams = [broker.stream({"n": n}, keepalive=0.01) for n in range(3)]
    for stream in streams[:2]:
        next(stream), next(stream)
    assert broker.clients == 2
    next(streams[2]), next(streams[2])
    assert broker.clients == 2
    # The oldest ends (its generator returns), the two newest still get every message.
    assert list(streams[0]) == []
    broker("state", {"n": 9})
    for stream in streams[1:]:
        assert next(stream) == 'event: state\ndata: {"n":9}\n\n'


def test_a_client_that_cannot_keep_up_is_dropped() -> None:
    broker = Broker(queue_size=2)
    stream = broker.stream({}, keepalive=0.01)
    next(stream), next(stream)
    for n in range(3):
        broker("cue", {"n": n})
    assert broker.clients == 0
    assert list(stream) == []


def test_close_ends_streams_that_are_waiting() -> None:
    broker = Broker()
    stream = broker.stream({}, keepalive=5)
    next(stream), next(stream)
    rest: list[str] = []
    reader = threading.Thread(target=lambda: rest.extend(stream))
    reader.start()
    broker.close()
    reader.join(timeout=2)
    assert not reader.is_alive() and rest == []


def test_many_open_scoreboards_do_not_starve_the_api(tmp_path: Path) -> None:
    """More event streams than the server has threads: the oldest are ended, and the API answers."""
    with running_companion(tmp_path / "journal.db") as server:
        connections = []
        try:
            for _ in range(30):
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
                connection.request("GET", "/api/events")
                response = connection.getresponse()
                assert response.status == 200
                connections.append((connection, response))
            # Starved, these calls would hang until server.call's timeout and fail.
            assert server.call("GET", "/api/state")["status"] == "idle"
            started = server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob"]})
            assert started["game"] == "spy"
            # The newest stream is still live and got the new game.
            newest = connections[-1][1]
            text = b""
            while b'"game":"spy"' not in text:
                text += newest.read1(65536)
        finally:
            for connection, _ in connections:
                connection.close()
