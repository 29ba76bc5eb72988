"""Power cuts at random moments under an unmodified `companion run` (tests/power_cuts.py, on the
file system of tests/lazyfs.py that drops every unsynced write at a cut). Goal (issue 26): 0
acknowledged inputs lost, 0 doubled, the restarted state the last acknowledged one (or the one in
flight), every acknowledged pairing kept, SQLite's integrity_check clean on every file.

    .venv/bin/python bench/power_cuts.py [--cuts 200] [--seed 26]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
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
    print(
        f"inputs acknowledged: {len(report.acknowledged)}; cut before their answer but kept by the disk: "
        f"{report.in_flight_kept}; retried with their key: {report.retried}; devices paired: {report.paired}"
    )
    print(f"problems: {len(report.problems)}")
    for problem in report.problems[:20]:
        print(f"  {problem}")
    return 0 if not report.problems else 1


if __name__ == "__main__":
    sys.exit(main())
