"""Tap latency: how long from a card put on the reader to (a) its cue reaching the feedback layer and
(b) its SSE message reaching a connected scoreboard, against nfcpy's bare read of the same tag.

    .venv/bin/python bench/tap_latency.py [--taps 60] [--json results.json]

Everything is real but the radio: nfcpy's UDP driver carries the frames, a Type 3 Tag emulated by
nfcpy in another process (tests/nfc_emulator.py) answers them. The daemon is the whole daemon
(journal with fsync, Spy Team engine, mock GPIO feedback, waitress serving the event stream).

Two starting points are reported for each tap:

- "presented": the emulator starts answering. This includes waiting for the reader's next poll,
  which for nfcpy's UDP driver is up to 0.1 s here (the presence check that notices the previous
  card gone) plus its polling, and is the same for the bare read and the daemon;
- "activated": the reader's poll met the tag (the emulator received its first command). From here
  on, all time is reading the tag and the daemon's own work, so the ratio of the two is the
  daemon's overhead.

Cards are swapped on the reader, one after the other (each tap a new tag), as players do.
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

import nfc

from companion.daemon import Daemon
from companion.readers.nfc import card_id_from_records
from tests.nfc_emulator import TagEmulator, uid, wait_for
from tests.nfc_helpers import SseClient, free_udp_port, nfc_config, serving

SPY_TEAM_CARDS = [f"spy-team/{colour}-{n}" for colour in ("red", "blue") for n in range(1, 25)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def summary(values: list[float]) -> dict[str, float]:
    """Median and p95 in milliseconds."""
    return {
        "median_ms": round(1000 * statistics.median(values), 2),
        "p95_ms": round(1000 * percentile(values, 0.95), 2),
    }


def activation_of(emulator: TagEmulator, tag: str, after: float) -> float:
    return min(t for u, t in emulator.activations() if u == tag and t >= after)


# nfcpy alone


def bare_reads(emulator: TagEmulator, taps: int, first: int) -> list[tuple[float, float, float]]:
    """(presented, activated, read) per tap: nfcpy's connect with the options the daemon uses, the
    card id read from the tag's NDEF text record, nothing more."""
    reads: dict[str, float] = {}
    stop = threading.Event()

    def on_connect(tag: Any) -> bool:
        records = tag.ndef.records if tag.ndef is not None else []
        card_id_from_records(records)
        reads[bytes(tag.identifier).hex()] = time.monotonic()
        return True

    def run() -> None:
        clf = nfc.ContactlessFrontend(emulator.path)
        options = {"targets": ["212F"], "on-connect": on_connect, "iterations": 1, "interval": 0.0}
        options["beep-on-connect"] = False
        try:
            while not stop.is_set():
                clf.connect(rdwr=options, terminate=stop.is_set)
        finally:
            clf.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    results = []
    for number in range(first, first + taps):
        tag = uid(number)
        presented = emulator.present(tag, SPY_TEAM_CARDS[number % 48])
        read = wait_for(lambda tag=tag: reads.get(tag))
        results.append((presented, activation_of(emulator, tag, presented), read))
    emulator.lift()
    stop.set()
    thread.join(timeout=5)
    return results


# The daemon


def next_card(daemon: Daemon) -> str:
    """A card the game accepts now: choose the missions first if a round is starting, start a new
    game if this one is over."""
    view = daemon.table.view()
    if view["status"] != "playing":
        daemon.table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"])
        view = daemon.table.view()
    for team in view["teams"]:
        if team["mission"] is None:  # a new round: this team picks the first mission it may
            action = next(a for a in view["prompt"]["actions"] if a.get("seat") in team["seats"])
            daemon.table.act({k: v for k, v in action.items() if k != "label"})
    view = daemon.table.view()
    assert view["prompt"]["tap"], view["prompt"]
    return next(card for card in SPY_TEAM_CARDS if card not in view["played"])


def daemon_taps(emulator: TagEmulator, taps: int, first: int) -> list[tuple[float, float, float, float]]:
    """(presented, activated, cue at the feedback layer, SSE message at the client) per tap."""
    with tempfile.TemporaryDirectory(prefix="tap-latency-") as folder:
        config = nfc_config(Path(folder), {"device": emulator.path, "debounce": 0.0})
        daemon = Daemon(config)
        cue_times: dict[str, float] = {}
        feedback = daemon.feedback

        def timed_feedback(kind: str, payload: dict[str, Any]) -> None:
            if kind == "cue" and payload["cue"] == "card-accepted" and "card" in payload["data"]:
                cue_times[payload["data"]["card"]] = time.monotonic()
            feedback(kind, payload)

        daemon.table.listeners[daemon.table.listeners.index(feedback)] = timed_feedback
        daemon.start()
        results = []
        try:
            with serving(daemon) as url:
                scoreboard = SseClient(url)
                wait_for(lambda: scoreboard.find(lambda kind, data: kind == "state"))
                for number in range(first, first + taps):
                    card, tag = next_card(daemon), uid(number)
                    cue_times.pop(card, None)
                    presented = emulator.present(tag, card)
                    cue = wait_for(lambda card=card: cue_times.get(card))

                    def accepted(kind: str, data: dict[str, Any], card: str = card) -> bool:
                        return (
                            kind == "cue"
                            and data["cue"] == "card-accepted"
                            and data["data"].get("card") == card
                        )

                    sse = wait_for(lambda after=presented: scoreboard.find(accepted, after=after))
                    results.append((presented, activation_of(emulator, tag, presented), cue, sse))
                emulator.lift()
                scoreboard.close()
        finally:
            daemon.close()
        return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--taps", type=int, default=60, help="taps measured in each run (default 60)")
    parser.add_argument("--warmup", type=int, default=3, help="taps not measured first (default 3)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    with TagEmulator(free_udp_port()) as emulator:
        bare = bare_reads(emulator, args.warmup + args.taps, 1)[args.warmup :]
        full = daemon_taps(emulator, args.warmup + args.taps, 1000)[args.warmup :]

    figures = {
        "taps": args.taps,
        "bare_read": {
            "from_presented": summary([r - p for p, a, r in bare]),
            "from_activated": summary([r - a for p, a, r in bare]),
        },
        "daemon_cue": {
            "from_presented": summary([c - p for p, a, c, s in full]),
            "from_activated": summary([c - a for p, a, c, s in full]),
        },
        "daemon_sse": {
            "from_presented": summary([s - p for p, a, c, s in full]),
            "from_activated": summary([s - a for p, a, c, s in full]),
        },
    }
    for start in ("from_presented", "from_activated"):
        bare_median = figures["bare_read"][start]["median_ms"]
        figures[f"ratio_median_{start}"] = {
            "cue": round(figures["daemon_cue"][start]["median_ms"] / bare_median, 2),
            "sse": round(figures["daemon_sse"][start]["median_ms"] / bare_median, 2),
        }

    print(f"{args.taps} taps each (after {args.warmup} warm-up taps); milliseconds, median / p95")
    print(f"{'':24}{'from presented':>20}{'from activated':>20}")
    for key, label in (
        ("bare_read", "nfcpy bare read"),
        ("daemon_cue", "daemon: cue"),
        ("daemon_sse", "daemon: SSE"),
    ):
        cells = [
            f"{figures[key][s]['median_ms']:.1f} / {figures[key][s]['p95_ms']:.1f}"
            for s in ("from_presented", "from_activated")
        ]
        print(f"{label:24}{cells[0]:>20}{cells[1]:>20}")
    for start in ("presented", "activated"):
        ratio = figures[f"ratio_median_from_{start}"]
        print(f"daemon / bare read (medians, from {start}): cue {ratio['cue']}x, SSE {ratio['sse']}x")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
