"""Helpers for the NFC tests and the tap benchmark: free ports, a reader "cable" to pull, a daemon
served by a real waitress server, and a Server-Sent Events client."""

from __future__ import annotations

import contextlib
import errno
import http.client
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import nfc.clf.udp

from companion.appliance.daemon import Daemon
from companion.core.config import Config
from tests.pn532_emulator import numbered_ntag
from tests.spy_team_play import trick_cards
from tests.waiting import wait_for, wait_polls

TOKEN = "nfc-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Taps:
    """A tap handler that records the taps it gets (a reader calls it from its own thread)."""

    def __init__(self) -> None:
        self.taps: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, **tap: Any) -> None:
        with self._lock:
            self.taps.append(tap)

    def __len__(self) -> int:
        with self._lock:
            return len(self.taps)


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nfc_config(tmp: Path, *readers: dict[str, Any]) -> Config:
    """A daemon config for tests: the given readers, mock pins, a journal in `tmp`."""
    return Config(token=TOKEN, db=tmp / "journal.db", readers=list(readers), mock_pins=True)


@contextmanager
def running_daemon(config: Config) -> Iterator[tuple[Daemon, list[dict[str, Any]]]]:
    """A started daemon, and the log of every cue it plays (kept from before its readers start)."""
    daemon = Daemon(config)
    cues = cue_log(daemon)
    daemon.start()
    try:
        yield daemon, cues
    finally:
        daemon.close()


def cue_log(daemon: Daemon) -> list[dict[str, Any]]:
    """Every cue the table plays from now on (a listener after the feedback layer)."""
    seen: list[dict[str, Any]] = []
    daemon.table.listeners.append(lambda kind, cue: seen.append(cue.to_json()) if kind == "cue" else None)
    return seen


def names(cues: list[dict[str, Any]]) -> list[str]:
    return [cue["cue"] for cue in cues]


class Cable:
    """The reader's USB cable, for nfcpy's UDP driver in this process.

    A UDP "reader" cannot be unplugged: its socket never fails, and a silent peer looks exactly like
    an empty reader. This makes it fail the way nfcpy's USB transport fails when a reader is pulled
    out: every poll and every exchange raises IOError(ENODEV), and opening the device raises too.
    Everything above the driver (ContactlessFrontend, the tag classes, our reader) is the real code.
    """

    def __init__(self, monkeypatch: Any) -> None:
        self.plugged = True
        self._patch(monkeypatch, nfc.clf.udp.Device, "sense_ttf")
        self._patch(monkeypatch, nfc.clf.udp.Device, "send_cmd_recv_rsp")
        self._patch(monkeypatch, nfc.clf.udp, "init")

    def unplug(self) -> None:
        self.plugged = False

    def plug(self) -> None:
        self.plugged = True

    def _patch(self, monkeypatch: Any, owner: Any, name: str) -> None:
        original = getattr(owner, name)

        def guarded(*args: Any, **kwargs: Any) -> Any:
            if not self.plugged:
                raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, guarded)


@contextmanager
def serving(daemon: Daemon) -> Iterator[str]:
    """The daemon's web app on a real waitress server on a free loopback port; yields its base URL."""
    from waitress import wasyncore
    from waitress.server import create_server

    server: Any = create_server(daemon.app, host="127.0.0.1", port=0, threads=8, ident=None)
    thread = threading.Thread(target=server.run, name="waitress", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        daemon.broker.close()  # ends the event streams, which hold server threads
        server.task_dispatcher.shutdown(timeout=5)
        # Sockets are closed on the server's own loop thread (closing them under its feet from here
        # makes its select() fail); with nothing left to watch, the loop returns.
        # OSError: the loop, awake already, ran the closing before our wake-up byte was written.
        with contextlib.suppress(OSError):
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        thread.join(timeout=5)


class SseClient:
    """A scoreboard's event stream (`GET /api/events`), read on a thread; every event timestamped."""

    def __init__(self, base_url: str) -> None:
        host, port = base_url.removeprefix("http://").split(":")
        self._conn = http.client.HTTPConnection(host, int(port), timeout=30)
        self._conn.request("GET", "/api/events")
        self._response = self._conn.getresponse()
        assert self._response.status == 200, self._response.status
        self.events: list[tuple[float, str, dict[str, Any]]] = []  # (time.monotonic(), kind, data)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, name="sse", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        kind, data = "message", ""
        try:
            while True:
                line = self._response.readline()
                if not line:
                    return
                text = line.decode().rstrip("\r\n")
                if text.startswith("event:"):
                    kind = text[6:].strip()
                elif text.startswith("data:"):
                    data += text[5:].strip()
                elif text == "" and data:
                    with self._lock:
                        self.events.append((time.monotonic(), kind, json.loads(data)))
                    kind, data = "message", ""
        except (OSError, ValueError):  # closed under us at the end of a test
            return

    def find(self, match: Callable[[str, dict[str, Any]], bool], after: float = 0.0) -> float | None:
        """The time of the first event since `after` that `match`es, or None."""
        with self._lock:
            for at, kind, data in self.events:
                if at >= after and match(kind, data):
                    return at
        return None

    def close(self) -> None:
        self._conn.close()


class BoardOnABus(Protocol):
    """A reader board the test handles: tests/pn532_buses.py's and tests/rc522_emulator.py's."""

    transfers: int

    def put(self, tag: Any) -> None: ...
    def lift(self) -> None: ...
    def unplug(self) -> None: ...
    def plug(self, *tags: Any) -> None: ...


def play_a_trick_on_a_board(daemon: Daemon, cues: list[dict[str, Any]], board: BoardOnABus) -> None:
    """Spy Team's first trick, its cards tapped on `board` (the daemon's only reader): the first card
    held a while (polled on and on, read once, played once), the second left on the board while the
    board goes off the bus and back (not played again). Seat 1 wins the trick."""
    daemon.table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"], {"start": 0})
    daemon.table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    daemon.table.act({"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
    cards = trick_cards(daemon.table.view(), winner=1)
    wait_for(lambda: daemon.health()["reader"] == "ok")

    def played() -> int:
        return len(daemon.table.view()["played"])

    def reader() -> dict[str, Any]:
        return dict(daemon.health()["readers"][0])

    for number, card in enumerate(cards, start=1):
        tag = numbered_ntag(number, card)
        board.put(tag)
        wait_for(lambda n=number: played() == n)  # type: ignore[misc]
        if number == 1:
            transfers = board.transfers
            wait_polls(reader, 30)  # held, polled 30 times
            assert played() == 1 and board.transfers > transfers  # polled all along
            assert daemon.health()["readers"][0]["reads"] == 1  # and never lost between two polls
        if number == 2:
            board.unplug()
            wait_for(lambda: daemon.health()["reader"] == "lost")
            board.plug(tag)
            wait_for(lambda: daemon.health()["reader"] == "ok")
            wait_polls(reader, 20)  # the card still lies there: not played again
            assert played() == 2
        board.lift()
    assert daemon.table.view()["played"] == cards
    # the last card's cues follow its state: wait for the cue itself
    wait_for(lambda: "trick-won" in names(cues) and names(cues).count("card-accepted") >= 2 + 4)
    assert names(cues).count("card-accepted") == 2 + 4
    assert names(cues).count("reader-lost") == 1 and names(cues).count("reader-back") == 1
    [won] = [c for c in cues if c["cue"] == "trick-won"]
    assert won["seat"] == 1
