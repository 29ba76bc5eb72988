"""What a tap costs on a PN532's serial line, at the 115200 baud the companion keeps.

    .venv/bin/python bench/pn532_serial.py [--taps 40] [--json results.json]

nfcpy's own `pn532` driver reads NTAG215 tags from the PN532 emulated on a pseudo-terminal
(tests/pn532_emulator.py), which models the line: 10 bits a byte at the chip's rate, plus a few
milliseconds of chip time per empty poll. Two readers run in interleaved blocks on the same
emulated board, one tag after the other (each tap a new tag, as players swap cards):

- "nfcpy": the floor, nfcpy's bare `connect` reading the tag's NDEF records;
- "companion": the daemon's `NfcReader` (the activation and the READs that name the card, the tap
  filter, the handler; bench/reader_traffic_nfcpy.py sets it beside the protocol's minimum).

For each tap it reports the wall time from the tag laid on the reader to the read (the handler
called), and, counted by the emulator from the poll that met the tag to the read, the frames and
bytes both ways and their time on the wire at 115200 baud and, for comparison, what the same bytes
would take at 921600 (the rate nfcpy raises the line to, and the companion does not: a chip left
there by an unclean exit needs a power cycle). Idle polling is reported per poll.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere in the checkout

from companion.readers.frontend import close_frontend, open_frontend
from companion.readers.nfc import NfcReader, card_id_from_records
from tests.pn532_emulator import Ntag, Pn532Emulator, Stats

CARDS = [f"spy-team/{colour}-{n}" for colour in ("red", "blue") for n in range(1, 25)]


def ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(1000 * statistics.median(ordered), 2),
        "p95_ms": round(1000 * ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))], 2),
    }


class Board:
    """The emulated board and the taps laid on it."""

    def __init__(self, folder: Path) -> None:
        self.emulator = Pn532Emulator(folder)
        self.number = 0

    def lay(self) -> tuple[str, float, int]:
        """A new tag with a card id on the reader: (card, when, index of its activation)."""
        self.number += 1
        card = CARDS[self.number % len(CARDS)]
        found = len(self.emulator.chip.stats.found)
        self.emulator.put(Ntag(f"04{self.number:012x}", 215, text=card))
        return card, time.perf_counter(), found

    def cost(self, found: int) -> dict[str, float]:
        """The line's traffic from the poll that met the tag (activation `found`) to now."""
        stats: Stats = self.emulator.chip.stats
        start = stats.found[found]
        now = stats.snapshot()
        frames = (now[0] - start[0]) + (now[1] - start[1])
        octets = (now[2] - start[2]) + (now[3] - start[3])
        return {
            "frames": frames,
            "bytes": octets,
            "line_s": now[4] - start[4],
            "bytes_921600_s": octets * 10 / 921600,
        }


def bare_nfcpy(board: Board, taps: int) -> list[dict[str, float]]:
    clf = open_frontend(board.emulator.path)
    results = []
    try:
        for _ in range(taps):
            card, laid, found = board.lay()
            got: list[str | None] = []

            def on_connect(tag: Any, got: list[str | None] = got) -> bool:
                got.append(card_id_from_records(tag.ndef.records if tag.ndef else []))
                return False

            options = {"targets": ["106A"], "on-connect": on_connect, "iterations": 1, "interval": 0.0}
            clf.connect(rdwr={**options, "beep-on-connect": False}, terminate=lambda got=got: bool(got))
            read = time.perf_counter()
            assert got == [card], got
            results.append({"wall_s": read - laid, **board.cost(found)})
            board.emulator.lift()
    finally:
        close_frontend(clf)
    return results


def companion(board: Board, taps: int) -> list[dict[str, float]]:
    delivered: list[tuple[str, float]] = []
    arrived = threading.Event()

    def tap(card: str | None = None, **_: Any) -> None:
        delivered.append((str(card), time.perf_counter()))
        arrived.set()

    reader = NfcReader(board.emulator.path, debounce=0.0, retry=0.2)
    reader.start(tap)
    results = []
    try:
        for _ in range(taps):
            arrived.clear()
            card, laid, found = board.lay()
            assert arrived.wait(10), "no tap"
            results.append({"wall_s": delivered[-1][1] - laid, **board.cost(found)})
            assert delivered[-1][0] == card
            board.emulator.lift()
            while reader.filter.present is not None:  # seen gone: ready for the next card
                time.sleep(0.005)
    finally:
        reader.stop()
    return results


def idle_polls(board: Board, seconds: float = 2.0) -> dict[str, float]:
    reader = NfcReader(board.emulator.path, retry=0.2)
    reader.start(lambda **_: None)
    time.sleep(0.5)
    stats = board.emulator.chip.stats
    polls, before, started = len(stats.polls), stats.snapshot(), time.perf_counter()
    time.sleep(seconds)
    polls, after, elapsed = len(stats.polls) - polls, stats.snapshot(), time.perf_counter() - started
    reader.stop()
    return {
        "polls_per_s": round(polls / elapsed, 1),
        "frames_per_poll": round(((after[0] - before[0]) + (after[1] - before[1])) / polls, 1),
        "bytes_per_poll": round(((after[2] - before[2]) + (after[3] - before[3])) / polls, 1),
        "line_ms_per_poll": round(1000 * (after[4] - before[4]) / polls, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taps", type=int, default=40, help="taps per reader (default 40)")
    parser.add_argument("--blocks", type=int, default=4, help="interleaved blocks (default 4)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        board = Board(Path(folder))
        runs: dict[str, list[dict[str, float]]] = {"nfcpy": [], "companion": []}
        per_block = max(1, args.taps // args.blocks)
        for _ in range(args.blocks):  # interleaved: both readers see the same machine load
            runs["nfcpy"] += bare_nfcpy(board, per_block)
            runs["companion"] += companion(board, per_block)
        idle = idle_polls(board)
        board.emulator.close()
    report: dict[str, Any] = {"baud": 115200, "idle": idle}
    for name, taps in runs.items():
        report[name] = {
            "taps": len(taps),
            "wall": ms([t["wall_s"] for t in taps]),
            "line_at_115200": ms([t["line_s"] for t in taps]),
            "line_at_921600": ms([t["bytes_921600_s"] for t in taps]),
            "frames": statistics.median(t["frames"] for t in taps),
            "bytes": statistics.median(t["bytes"] for t in taps),
        }
    report["ratio_wall_companion_to_nfcpy"] = round(
        report["companion"]["wall"]["median_ms"] / report["nfcpy"]["wall"]["median_ms"], 2
    )
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
