"""What a tap costs the nfcpy family on a PN532's serial line (115200 baud), beside the minimum.

    .venv/bin/python bench/reader_traffic_nfcpy.py [--pairs 12] [--blocks 3] [--json out.json]

The PN532 is emulated on a pseudo-terminal in this process (tests/pn532_emulator.py): it counts
every command, the bytes both ways, and models the line time (10 bits a byte at the chip's rate, a
few milliseconds of chip time for a poll that finds nothing, 0.5 ms for any other command; the
emulator sleeps that time, so wall times follow the model). Three readers, each in a process of its
own opening the board with nfcpy's serial driver, take turns in interleaved blocks:

- "companion": the daemon's `NfcReader` (companion/readers/nfc.py);
- "floor": a bare loop of the protocol minimum at the same cadence: InListPassiveTarget, the READs
  the TLV needs, presence by InListPassiveTarget with the UID, a dict of UIDs already read;
- "nfcpy-connect": nfcpy's own `ContactlessFrontend.connect` reading `tag.ndef` (the reader before
  issue 22), for reference.

Each pair of taps lays a new NTAG215 (a catalogue card id, in turn) and, once the reader saw it
lifted, the same tag again: a first tap and a repeat tap. A tap's traffic is counted from the poll
that met the tag to the tap handler (which blocks until the bench has counted). The minimum of a
tap is computed from the protocol with the emulator's own frame sizes and line model: one
InListPassiveTarget for a known UID, plus one InDataExchange READ per 16 bytes the TLV spans for a
record. Idle: polls of an empty field over two seconds, and the reader process's CPU time.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere in the checkout

from tests.pn532_emulator import CHIP_TIME, Exchange, Ntag, Pn532Emulator, frame, ndef_tlv, text_message

BAUD = 115200
ILPT, READ_CMD = 0x4A, 0x40


# The minimum, from the protocol


def command_bytes(command: bytes, answer: bytes) -> int:
    """A command frame, the chip's ACK and its answer frame (TFI and command code included)."""
    return len(frame(b"\xd4" + command)) + 6 + len(frame(b"\xd5" + answer))


def minimum(uid: bytes, reads: int) -> dict[str, float]:
    """Activation (InListPassiveTarget of a 7-byte UID), then `reads` 16-byte READs (InDataExchange)."""
    activation = command_bytes(b"\x4a\x01\x00", b"\x4b\x01\x01\x00\x44\x00" + bytes([len(uid)]) + uid)
    read = command_bytes(b"\x40\x01\x30\x04", b"\x41\x00" + bytes(16))
    octets = activation + reads * read
    return {
        "commands": 1 + reads,
        "frames": 3 * (1 + reads),
        "bytes": octets,
        "line_ms": 1000 * (octets * 10 / BAUD + (1 + reads) * CHIP_TIME),
    }


def reads_needed(card: str) -> int:
    """16-byte READs from page 4 that cover the NDEF TLV (its terminator need not be read)."""
    return -(-(len(ndef_tlv(text_message(card))) - 1) // 16)


# The readers, each in a child process


def _companion(path: str, conn: Connection, go: threading.Event) -> Any:
    from companion.readers.nfc import NfcReader

    def tap(card: str | None = None, uid: str | None = None, **_: Any) -> None:
        conn.send(("tap", card or uid, time.perf_counter()))
        go.wait()
        go.clear()

    reader = NfcReader(path, debounce=0.0, retry=0.2)
    reader.start(tap)
    return reader.stop


def _floor(path: str, conn: Connection, go: threading.Event) -> Any:
    import ndef

    from companion.readers.base import card_id_from_records
    from companion.readers.frontend import close_frontend, open_frontend
    from companion.readers.nfc import POLL_INTERVAL

    stopping = threading.Event()

    def run() -> None:
        clf = open_frontend(path)
        chipset, known = clf.device.chipset, {}

        def read(page: int) -> bytes:
            return bytes(chipset.in_data_exchange(bytes([0x30, page]), 0.5)[0])

        while not stopping.is_set():
            answer = chipset.in_list_passive_target(1, 0, b"")
            if answer is None:
                stopping.wait(POLL_INTERVAL)
                continue
            uid = bytes(answer[4 : 4 + answer[3]])
            if uid not in known:
                data = read(4)
                while len(data) < 2 + data[1]:
                    data += read(4 + len(data) // 4)
                known[uid] = card_id_from_records(list(ndef.message_decoder(data[2 : 2 + data[1]])))
            conn.send(("tap", known[uid], time.perf_counter()))
            go.wait()
            go.clear()
            selected = b"\x88" + uid
            while not stopping.wait(POLL_INTERVAL) and chipset.in_list_passive_target(1, 0, selected):
                pass
        close_frontend(clf)

    return in_thread(run, stopping)


def _nfcpy_connect(path: str, conn: Connection, go: threading.Event) -> Any:
    from companion.readers.base import card_id_from_records
    from companion.readers.frontend import close_frontend, open_frontend

    stopping = threading.Event()

    def on_connect(tag: Any) -> bool:
        conn.send(("tap", card_id_from_records(tag.ndef.records if tag.ndef else []), time.perf_counter()))
        go.wait()
        go.clear()
        return True

    def run() -> None:
        clf = open_frontend(path)
        options = {"targets": ["106A"], "on-connect": on_connect, "iterations": 1, "interval": 0.0}
        while not stopping.is_set():
            clf.connect(rdwr={**options, "beep-on-connect": False}, terminate=stopping.is_set)
        close_frontend(clf)

    return in_thread(run, stopping)


def in_thread(run: Any, stopping: threading.Event) -> Any:
    """Start `run` on a thread; how to stop it."""
    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def stop() -> None:
        stopping.set()
        thread.join(5)

    return stop


CLIENTS = {"companion": _companion, "floor": _floor, "nfcpy-connect": _nfcpy_connect}


def _child(name: str, path: str, conn: Connection) -> None:
    go = threading.Event()
    stop = CLIENTS[name](path, conn, go)
    while True:
        command = conn.recv()
        if command == "go":
            go.set()
        elif command == "cpu":
            conn.send(("cpu", time.process_time(), time.perf_counter()))
        elif command == "stop":
            stop()
            conn.send(("stopped", None, 0.0))
            return


# The bench


class Run:
    """One reader process on the board, and the taps laid for it."""

    def __init__(self, board: Pn532Emulator, name: str) -> None:
        self.board, self.name = board, name
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_child, args=(name, board.path, child), daemon=True)
        self.process.start()
        self.wait_empty_poll(len(board.chip.stats.exchanges), timeout=30)
        self.cycle = 0.1  # seconds: a bound on the poll cycle, for the phase of each lay
        warm_up = Ntag("04ffffffffffff", 215, text="spy/a-1")  # the first read imports ndef
        self.tap(warm_up, "spy/a-1", "first")

    def wait_empty_poll(self, start: int, timeout: float = 10) -> None:
        """Until the reader polled an empty field (for any tag) after exchange `start`."""
        deadline = time.monotonic() + timeout
        while True:
            sent = self.board.chip.stats.exchanges[start:]
            if any(e.code == ILPT and e.args == b"\x01\x00" and not e.found for e in sent):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: no empty poll")
            time.sleep(0.002)

    def tap(self, tag: Ntag, card: str, kind: str) -> dict[str, Any]:
        stats = self.board.chip.stats
        # A player's card arrives at any moment of the reader's cycle, not just after a poll.
        time.sleep(random.uniform(0, self.cycle))
        start = len(stats.exchanges)
        self.board.put(tag)
        laid = time.perf_counter()
        if not self.conn.poll(10):
            raise TimeoutError(f"{self.name}: no tap")
        what, named, tapped = self.conn.recv()
        end = len(stats.exchanges)
        self.conn.send("go")
        assert (what, named) == ("tap", card), (self.name, what, named, card)
        sent: list[Exchange] = stats.exchanges[start:end]
        met = next(i for i, e in enumerate(sent) if e.code == ILPT and e.found and e.args == b"\x01\x00")
        cost = sent[met:]
        floor = minimum(tag.uid, reads_needed(card) if kind == "first" else 0)
        line_ms = 1000 * sum(e.seconds for e in cost)
        lifted = len(stats.exchanges)
        self.board.lift()
        self.wait_empty_poll(lifted)
        return {
            "kind": kind,
            "commands": len(cost),
            "frames": 3 * len(cost),
            "bytes": sum(e.bytes for e in cost),
            "line_ms": line_ms,
            "ratio": line_ms / floor["line_ms"],
            "bytes_ratio": sum(e.bytes for e in cost) / floor["bytes"],
            "detect_ms": 1000 * (sent[met].at + sent[met].seconds - laid),
            "tap_ms": 1000 * (tapped - laid),
            "minimum": floor,
        }

    def idle(self, seconds: float = 2.0) -> dict[str, float]:
        stats = self.board.chip.stats
        self.conn.send("cpu")
        _, cpu0, t0 = self.conn.recv()
        start = len(stats.exchanges)
        time.sleep(seconds)  # the measuring window: the reader polls an empty field meanwhile
        sent = stats.exchanges[start:]
        self.conn.send("cpu")
        _, cpu1, t1 = self.conn.recv()
        polls = sum(1 for e in sent if e.code == ILPT and e.args == b"\x01\x00")
        line = sum(e.seconds for e in sent)
        return {
            "polls_per_s": round(polls / (t1 - t0), 1),
            "commands_per_poll": round(len(sent) / polls, 2),
            "frames_per_poll": round(3 * len(sent) / polls, 1),
            "bytes_per_poll": round(sum(e.bytes for e in sent) / polls, 1),
            "line_ms_per_poll": round(1000 * line / polls, 2),
            "line_busy": round(line / (t1 - t0), 3),
            "cpu_percent": round(100 * (cpu1 - cpu0) / (t1 - t0), 1),
        }

    def close(self) -> None:
        self.conn.send("stop")
        self.conn.poll(10)
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()


def summary(taps: list[dict[str, Any]]) -> dict[str, Any]:
    def median(key: str) -> float:
        return round(float(statistics.median(t[key] for t in taps)), 2)

    return {
        "taps": len(taps),
        **{key: median(key) for key in ("commands", "frames", "bytes", "line_ms", "ratio", "bytes_ratio")},
        "ratio_max": round(max(t["ratio"] for t in taps), 2),
        "minimum": taps[0]["minimum"] | {"line_ms": round(taps[0]["minimum"]["line_ms"], 2)},
        "detect_ms_median": median("detect_ms"),
        "detect_ms_max": round(max(t["detect_ms"] for t in taps), 2),
        "tap_ms_median": median("tap_ms"),
    }


def main() -> int:
    from companion.games.catalog import load_catalog
    from companion.readers.nfc import POLL_INTERVAL

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12, help="first+repeat pairs per reader and block")
    parser.add_argument("--blocks", type=int, default=3, help="interleaved blocks (default 3)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    cards = [card for game in load_catalog().values() for card in game.cards]
    taps: dict[str, list[dict[str, Any]]] = {name: [] for name in CLIENTS}
    idle: dict[str, list[dict[str, float]]] = {name: [] for name in CLIENTS}
    number = 0
    with tempfile.TemporaryDirectory() as folder:
        board = Pn532Emulator(Path(folder))
        for block in range(args.blocks):
            names = list(CLIENTS)[block % 3 :] + list(CLIENTS)[: block % 3]  # each goes first in turn
            for name in names:
                run = Run(board, name)
                try:
                    for _ in range(args.pairs):
                        number += 1
                        card = cards[number % len(cards)]
                        tag = Ntag(f"04{number:012x}", 215, text=card)
                        taps[name].append(run.tap(tag, card, "first"))
                        taps[name].append(run.tap(tag, card, "repeat"))
                    idle[name].append(run.idle())
                finally:
                    run.close()
        board.close()
    report: dict[str, Any] = {
        "baud": BAUD,
        "poll_interval_s": POLL_INTERVAL,
        "method": __doc__.split("\n\n")[2],
    }
    for name in CLIENTS:
        report[name] = {
            "first": summary([t for t in taps[name] if t["kind"] == "first"]),
            "repeat": summary([t for t in taps[name] if t["kind"] == "repeat"]),
            "idle": {key: statistics.median(i[key] for i in idle[name]) for key in idle[name][0]},
        }
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
