"""Start-up time and memory against the journal's length: 0, 10k and 100k entries.

    .venv/bin/python bench/startup.py [--rounds 5] [--json results.json]

Each journal holds whole Spy Team games played by the real engine (every input legal), then a
current game part-way through a round. Layouts:

- `empty`: no journal file yet;
- `10k` and `100k`: the steady state, the finished games moved to `journal-archive.db` by
  `Journal.archive` as the daemon does when a game starts, the live file holding the current game;
- `100k-live`: all 100k entries still in the live file, as a journal written before archives existed
  is found by its first start after the upgrade: that start moves the finished games to the archive
  (and shrinks the file) once, so this row is a one-time cost, not the steady state.

Every measurement starts from a fresh copy of the layout's files (a start changes them).

Two measurements per layout, each in a new process, the layouts interleaved round by round in a
rotating order (so a warm cache or a busy neighbour falls on all of them alike):

- **daemon**: `companion run` (mock pins, virtual reader, waitress) started as a subprocess; the time
  until its `/healthz` answers on loopback, then its resident memory (VmRSS, and the peak VmHWM)
  read from /proc;
- **fold**: in a child process with everything imported, the time to open the journal and fold the
  current game (`Table(Journal(db), engines)`), and how many entries that read.

Ratios are against `empty`, medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from anywhere in the checkout

from companion.games import build_engines  # noqa: E402
from companion.games.catalog import load_catalog  # noqa: E402
from companion.table.journal import Journal  # noqa: E402
from companion.table.table import Table  # noqa: E402

PLAYERS = ["Ann", "Bob", "Cid", "Dee"]
CARDS = [f"spy-team/{colour}-{n}" for colour in ("red", "blue") for n in range(1, 25)]
LAYOUTS = {"empty": 0, "10k": 10_000, "100k": 100_000, "100k-live": 100_000}
CURRENT_GAME_INPUTS = 20


# Building the journals


def one_game() -> list[str]:
    """The JSON of every input of one whole Spy Team game, as the table journals them."""
    table = Table(Journal(":memory:"), build_engines(load_catalog()))
    table.start("spy-team", PLAYERS, {"start": 0})
    while table.view()["status"] == "playing":
        view = table.view()
        if view["prompt"]["tap"]:
            table.tap(card=next(card for card in CARDS if card not in view["played"]))
            continue
        waiting = next(team for team in view["teams"] if team["mission"] is None)  # a new round
        table.act(next(a for a in table.legal_actions() if a.seat in waiting["seats"]).to_event())
    texts = [
        json.dumps(entry.event, separators=(",", ":"), sort_keys=True) for entry in table.journal.entries()
    ]
    table.journal.close()
    return texts


def build(folder: Path, layout: str, game: list[str]) -> Path:
    """A journal of `LAYOUTS[layout]` entries in `folder`: whole games, then the current one."""
    db = folder / layout / "journal.db"
    db.parent.mkdir(parents=True)
    length = LAYOUTS[layout]
    if not length:
        return db
    Journal(db).close()
    history = length - CURRENT_GAME_INPUTS
    rows = [("2026-01-01T00:00:00.000+00:00", game[i % len(game)]) for i in range(history)]
    # Whole games (the last one cut short: abandoned), then the current game's first inputs.
    rows += [("2026-01-01T00:00:00.000+00:00", text) for text in game[:CURRENT_GAME_INPUTS]]
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO entries (at, event) VALUES (?, ?)", rows)
        current = conn.execute("SELECT max(seq) FROM entries").fetchone()[0] - CURRENT_GAME_INPUTS + 1
    if layout != "100k-live":
        journal = Journal(db)
        journal.archive(before=current)
        journal.close()
    return db


def fresh_copy(db: Path, folder: Path) -> Path:
    """The journal `db` (and its archive) copied into an emptied `folder`."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for path in db.parent.iterdir():
        shutil.copy(path, folder / path.name)
    return folder / db.name


# The measurements (each in a new process)


def measure_daemon(db: Path) -> dict[str, float]:
    """`companion run` until /healthz answers, then its memory."""
    from tests.servers import free_port, run_arguments

    port = free_port()
    env = {**os.environ, "COMPANION_TOKEN": "bench-token"}
    command = [sys.executable, "-m", "companion.appliance.cli", *run_arguments(port, db)]
    began = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError):
                if process.poll() is not None:
                    raise RuntimeError(f"companion run exited with {process.returncode}") from None
                time.sleep(0.005)
        ready = time.perf_counter() - began
        status = Path(f"/proc/{process.pid}/status").read_text()
        memory = {
            line.split(":")[0]: int(line.split()[1]) for line in status.splitlines() if line.startswith("Vm")
        }
        return {"ready_s": ready, "rss_mb": memory["VmRSS"] / 1024, "peak_rss_mb": memory["VmHWM"] / 1024}
    finally:
        process.terminate()
        process.wait(timeout=10)


FOLD_CHILD = """
import json, sys, time
from companion.games.catalog import load_catalog
from companion.games import build_engines
from companion.table.journal import Journal
from companion.table.table import Table
engines = build_engines(load_catalog())
began = time.perf_counter()
table = Table(Journal(sys.argv[1]), engines)
took = time.perf_counter() - began
print(json.dumps({"fold_s": took, "rows_read": table.journal.rows_read}))
"""


def measure_fold(db: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", FOLD_CHILD, str(db)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


# The report


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="measurements of each layout (default 5)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {layout: [] for layout in LAYOUTS}
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        game = one_game()
        built = time.perf_counter()
        journals = {layout: build(Path(tmp), layout, game) for layout in LAYOUTS}
        print(f"one game = {len(game)} inputs; journals built in {time.perf_counter() - built:.1f} s")
        for layout, db in journals.items():
            if db.exists():
                size = Journal(db, read_only=True)
                print(f"  {layout:10} {size.size()}")
                size.close()
        order = list(LAYOUTS)
        for round_ in range(args.rounds):
            for layout in order[round_ % len(order) :] + order[: round_ % len(order)]:  # rotating
                daemon = measure_daemon(fresh_copy(journals[layout], Path(tmp) / "run"))
                fold = measure_fold(fresh_copy(journals[layout], Path(tmp) / "run"))
                results[layout].append({**daemon, **fold})
    figures: dict[str, Any] = {"rounds": args.rounds, "layouts": {}}
    base = {key: median([r[key] for r in results["empty"]]) for key in results["empty"][0]}
    print(f"\n{args.rounds} rounds, medians; ratio against the empty journal")
    print(
        f"{'journal':12}{'ready ms':>10}{'ratio':>7}{'RSS MB':>9}{'ratio':>7}"
        f"{'peak MB':>9}{'fold ms':>9}{'rows read':>11}"
    )
    for layout in LAYOUTS:
        row = {key: median([r[key] for r in results[layout]]) for key in results[layout][0]}
        ratios = {"ready": row["ready_s"] / base["ready_s"], "rss": row["rss_mb"] / base["rss_mb"]}
        figures["layouts"][layout] = {"entries": LAYOUTS[layout], **row, "ratio": ratios}
        print(
            f"{layout:12}{1000 * row['ready_s']:10.0f}{ratios['ready']:7.2f}{row['rss_mb']:9.1f}"
            f"{ratios['rss']:7.2f}{row['peak_rss_mb']:9.1f}{1000 * row['fold_s']:9.1f}"
            f"{row['rows_read']:11.0f}"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
