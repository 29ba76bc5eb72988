"""Power cuts at random moments under an unmodified `companion run` (tests/power_cuts.py, on the
file system of tests/lazyfs.py that drops every unsynced write at a cut), across every kind of write:
game starts that archive, whole games whose result waits in the MQTT outbox, pairings, enrollment
taps, imports, and the retry of whatever was in flight. Goal (issue 26): 0 acknowledged inputs lost,
0 doubled, the restarted state the last acknowledged one (or the one in flight), every acknowledged
pairing and tag kept, every result at the broker, SQLite's integrity_check clean on every file.

    .venv/bin/python bench/power_cuts.py [--cuts 200] [--seed 26]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import power_cuts
from tests.lazymount import why_not_mountable


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuts", type=int, default=200)
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    if (why := why_not_mountable()) is not None:
        print(f"cannot run: {why}")
        return 2
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        report = power_cuts.run(Path(folder), args.cuts, args.seed)
    seconds = time.monotonic() - started
    print(f"{report.cuts} power cuts in {seconds:.0f} s (seed {args.seed})")
    print(f"cut while in flight, by kind: {_by_kind(report.cut_during)}")
    print(f"acknowledged, by kind: {_by_kind(report.acknowledged)} ({report.inputs} journal inputs)")
    print(
        f"cut before their answer but kept by the disk: {report.in_flight_kept}; retried: {report.retried}; "
        f"rounds with the broker away: {report.away}; games' results at the broker: {report.results} "
        f"({report.duplicates} heard twice)"
    )
    print(f"problems: {len(report.problems)}")
    for problem in report.problems[:20]:
        print(f"  {problem}")
    return 0 if not report.problems else 1


def _by_kind(counts: Counter[str]) -> str:
    return ", ".join(f"{kind} {counts[kind]}" for kind in power_cuts.KINDS) + f"; none {counts['none']}"


if __name__ == "__main__":
    sys.exit(main())
