"""Tap latency: from a card reaching the reader to the buzzer's pin changing, against the floor, with
0, 8 and 32 scoreboards (tablets) connected.

    .venv/bin/python bench/tap_latency.py [--taps 10] [--blocks 4] [--tablets 0,8,32] [--json out.json]

Everything is real but the radio: nfcpy's UDP driver carries the frames and a Type 3 Tag emulated by
nfcpy in another process (tests/nfc_emulator.py) answers them.

- **daemon**: the whole daemon in this process (journal with fsync, Spy Team engine, feedback on
  gpiozero's MockFactory with a MockPWMPin buzzer, waitress built as `companion run` builds it)
  reading its own emulated tag; the time is when the buzzer's pin changes for the `card-accepted` cue
  (gpiozero's own record of the pin's state changes).
- **floor**: what no companion can do without: nfcpy's bare read of the same kind of tag (its
  `connect` with the daemon's options, the card id read from the NDEF text record), one SQLite insert
  of the same row, committed and fsynced (WAL, synchronous=FULL, as the journal), and one write to a
  MockPWMPin. It reads a second emulated tag, so both run in the same conditions.

Both clocks start when the reader's poll meets the tag ("activated": the emulator's first command),
which leaves out the phase of nfcpy's presence check and polling (the same for both, and different
on real hardware). "presented" (the emulator starts answering) is reported too.

Blocks of taps alternate (floor, daemon, daemon, floor, ...), so drift falls on both alike. The
tablets are Server-Sent-Events clients in other processes (8 streams per process) that read every
message as it comes; they only read lines (no JSON parsing): a real tablet does its own work on its
own CPU. Each tablet connects from its own loopback address (127.0.1.N), as tablets on a table
have their own, so the per-address limits apply as they would there.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from anywhere in the checkout

import nfc  # noqa: E402
from gpiozero.pins.mock import MockFactory, MockPWMPin  # noqa: E402

from companion.appliance.daemon import Daemon  # noqa: E402
from companion.readers.nfc import card_id_from_records  # noqa: E402
from tests.nfc_emulator import TagEmulator, uid  # noqa: E402
from tests.nfc_helpers import free_udp_port, nfc_config  # noqa: E402

SPY_TEAM_CARDS = [f"spy-team/{colour}-{n}" for colour in ("red", "blue") for n in range(1, 25)]
READ_OPTIONS = {"targets": ["212F"], "iterations": 1, "interval": 0.0, "beep-on-connect": False}
SETTLE = 0.15  # s the bench sleeps after presenting a tag before it looks (it never polls meanwhile)

Tap = tuple[float, float, float]  # (presented, activated, pin changed), time.monotonic()


def wait_for(condition: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Sleep first, then look now and then: the bench's own thread stays off the GIL while it waits."""
    time.sleep(SETTLE)
    deadline = time.monotonic() + timeout
    while (value := condition()) is None or value is False:
        if time.monotonic() > deadline:
            raise TimeoutError("no answer in time")
        time.sleep(0.01)
    return value


def activation_of(emulator: TagEmulator, tag: str) -> float | None:
    """When the reader's poll first met `tag` (each tap is a new tag, so its first activation)."""
    return min((t for u, t in emulator.activations() if u == tag), default=None)


def change_after(pin: MockPWMPin, index: int, after: float) -> float | None:
    """When the pin's state first changed after `after`, looking at the changes from the `index`-th
    on (gpiozero records the gaps between changes and the time of the last one), or None."""
    states = list(pin.states)
    at = float(pin._last_change)
    times = []
    for state in reversed(states[index:]):
        times.append(at)
        at -= state.timestamp
    return min((t for t in times if t >= after), default=None)


def timed_tap(emulator: TagEmulator, pin: MockPWMPin, tag: str, card: str) -> Tap:
    """Present a new tag; (presented, activated, pin changed) once the pin has answered it."""
    index = len(pin.states)
    presented = emulator.present(tag, card)
    activated = wait_for(lambda: activation_of(emulator, tag))
    changed = wait_for(lambda: change_after(pin, index, activated))
    return presented, activated, changed


# The floor


class Floor:
    """nfcpy's bare read + one fsync'd SQLite insert of the same row + one pin write."""

    def __init__(self, emulator: TagEmulator, folder: Path) -> None:
        self.emulator = emulator
        self.db = sqlite3.connect(folder / "floor.db", isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT, event TEXT)")
        self.pin = MockFactory(pin_class=MockPWMPin).pin(18)
        self.pin.function = "output"
        self.pin.frequency = 2000

    def on_connect(self, tag: Any) -> bool:
        records = tag.ndef.records if tag.ndef is not None else []
        card = card_id_from_records(records)
        event = json.dumps({"card": card, "type": "tap"}, separators=(",", ":"))
        self.db.execute("INSERT INTO entries (at, event) VALUES (?, ?)", ("2026-01-01T00:00:00.000", event))
        self.pin.state = 0.5
        return True

    def block(self, taps: list[tuple[str, str]]) -> list[Tap]:
        stop = threading.Event()
        clf = nfc.ContactlessFrontend(self.emulator.path)

        def run() -> None:
            while not stop.is_set():
                clf.connect(rdwr={**READ_OPTIONS, "on-connect": self.on_connect}, terminate=stop.is_set)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        results = []
        try:
            for tag, card in taps:
                self.pin.state = 0
                results.append(timed_tap(self.emulator, self.pin, tag, card))
        finally:
            self.emulator.lift()
            stop.set()
            thread.join(timeout=5)
            clf.close()
        return results


# The daemon


class DaemonSide:
    def __init__(self, emulator: TagEmulator, folder: Path, streams: int) -> None:
        from companion.webapp.server import build_server

        self.emulator = emulator
        config = nfc_config(folder, {"device": emulator.path, "debounce": 0.0})
        config.scoreboards = max(config.scoreboards, streams)
        self.daemon = Daemon(config)
        buzzer = self.daemon.feedback.buzzer
        assert buzzer is not None, "the default pins have a buzzer"
        self.pin: MockPWMPin = buzzer.pwm_device.pin if hasattr(buzzer, "pwm_device") else buzzer.pin
        self.server: Any = build_server(self.daemon.app, "127.0.0.1", 0, streams=self.daemon.broker.capacity)
        self.url = f"http://127.0.0.1:{self.server.effective_port}"
        self.thread = threading.Thread(target=self.server.run, name="waitress", daemon=True)
        self.thread.start()
        self.daemon.start()

    def next_card(self) -> str:
        """A card the game accepts now: missions first when a round starts, a new game after one ends."""
        table = self.daemon.table
        if table.view()["status"] != "playing":
            table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"])
        for team in table.view()["teams"]:
            if team["mission"] is None:  # a new round: this team picks the first mission it may
                table.act(next(a for a in table.legal_actions() if a.seat in team["seats"]).to_event())
        return next(card for card in SPY_TEAM_CARDS if card not in table.view()["played"])

    def block(self, tags: list[str]) -> list[Tap]:
        results = []
        for tag in tags:
            card = self.next_card()
            self.daemon.feedback.wait_idle()
            results.append(timed_tap(self.emulator, self.pin, tag, card))
        self.emulator.lift()
        return results

    def close(self) -> None:
        from waitress import wasyncore

        self.daemon.broker.close()
        self.server.task_dispatcher.shutdown(timeout=5)
        with contextlib.suppress(OSError):
            self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map))
        self.thread.join(timeout=5)
        self.daemon.close()


# Tablets: event-stream readers in other processes

TABLETS = r"""
import http.client, sys, threading
host, port, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
messages = [0] * count
ready = threading.Semaphore(0)
def read(i):
    try:  # each tablet from its own loopback address, as tablets on a table have their own
        source = (f"127.0.1.{first + i + 1}", 0)
        conn = http.client.HTTPConnection(host, port, timeout=300, source_address=source)
        conn.request("GET", "/api/events")
        response = conn.getresponse()
    except OSError:
        messages[i] = -1
        return
    finally:
        ready.release()
    if response.status != 200:
        messages[i] = -1
        return
    try:
        while line := response.readline():
            if line.startswith(b"event:"):
                messages[i] += 1
    except OSError:
        messages[i] = -messages[i] - 2  # cut off
for i in range(count):
    threading.Thread(target=read, args=(i,), daemon=True).start()
for _ in range(count):
    ready.acquire()
print("connected", flush=True)
sys.stdin.read()  # until the bench closes our stdin
print(" ".join(map(str, messages)), flush=True)
"""


class Tablets:
    def __init__(self, url: str, count: int, per_process: int = 8) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.processes = []
        for first in range(0, count, per_process):
            n = min(per_process, count - first)
            process = subprocess.Popen(
                [sys.executable, "-c", TABLETS, host, port, str(first), str(n)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            self.processes.append(process)
        for process in self.processes:
            assert process.stdout is not None and process.stdout.readline().strip() == "connected"

    def close(self) -> list[int]:
        """Messages each tablet received (-1: refused; below -1: cut off after -n-2 messages)."""
        counts: list[int] = []
        for process in self.processes:
            out, _ = process.communicate("", timeout=30)
            counts += [int(n) for n in out.split()]
        return counts


# The run


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median_ms": round(1000 * statistics.median(values), 2), "p95_ms": round(1000 * p95, 2)}


def run(taps: int, blocks: int, tablet_counts: list[int], folder: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {"taps_per_block": taps, "blocks": blocks, "tablets": {}}
    number = 1
    with TagEmulator(free_udp_port()) as floor_tag, TagEmulator(free_udp_port()) as daemon_tag:
        floor = Floor(floor_tag, folder)
        daemon = DaemonSide(daemon_tag, folder, streams=max(tablet_counts))
        try:
            floor.block([(uid(9000), SPY_TEAM_CARDS[0])])  # warm-up, not counted
            daemon.block([uid(9001)])
            for count in tablet_counts:
                tablets = Tablets(daemon.url, count) if count else None
                measured: dict[str, list[Tap]] = {"floor": [], "daemon": []}
                for block in range(blocks):
                    order = ("floor", "daemon") if block % 2 == 0 else ("daemon", "floor")
                    for side in order:
                        tags = [uid(number + i) for i in range(taps)]
                        number += taps
                        if side == "floor":
                            cards = [SPY_TEAM_CARDS[i % 48] for i in range(taps)]
                            measured[side] += floor.block(list(zip(tags, cards, strict=True)))
                        else:
                            measured[side] += daemon.block(tags)
                received = tablets.close() if tablets else []
                row: dict[str, Any] = {}
                for side, results in measured.items():
                    row[side] = {
                        "from_activated": summary([c - a for p, a, c in results]),
                        "from_presented": summary([c - p for p, a, c in results]),
                    }
                for start in ("from_activated", "from_presented"):
                    row[f"ratio_{start}"] = {
                        stat: round(row["daemon"][start][stat] / row["floor"][start][stat], 2)
                        for stat in ("median_ms", "p95_ms")
                    }
                row["tablet_messages"] = {"min": min(received, default=0), "max": max(received, default=0)}
                figures["tablets"][str(count)] = row
        finally:
            daemon.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--taps", type=int, default=10, help="taps per block (default 10)")
    parser.add_argument(
        "--blocks", type=int, default=4, help="blocks of each side per tablet count (default 4)"
    )
    parser.add_argument("--tablets", default="0,8,32", help="tablet counts (default 0,8,32)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    counts = [int(n) for n in args.tablets.split(",")]
    with tempfile.TemporaryDirectory(prefix="tap-latency-") as folder:
        figures = run(args.taps, args.blocks, counts, Path(folder))
    print(f"{args.taps * args.blocks} taps per side and tablet count; ms from activated, median / p95")
    print(f"{'tablets':>8}{'floor':>16}{'daemon':>16}{'ratio':>14}{'from presented':>22}{'messages':>12}")
    for count, row in figures["tablets"].items():
        a, p = row["ratio_from_activated"], row["ratio_from_presented"]
        cells = [
            f"{row[side]['from_activated']['median_ms']:.2f} / {row[side]['from_activated']['p95_ms']:.2f}"
            for side in ("floor", "daemon")
        ]
        ratio = f"{a['median_ms']:.2f} / {a['p95_ms']:.2f}"
        presented = f"{p['median_ms']:.2f} / {p['p95_ms']:.2f}"
        messages = f"{row['tablet_messages']['min']}-{row['tablet_messages']['max']}"
        print(f"{count:>8}{cells[0]:>16}{cells[1]:>16}{ratio:>14}{presented:>22}{messages:>12}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
