"""Two trees' scoreboards side by side: cold loads alternating between a daemon of this tree and one
of another checkout (a commit before a change), 4x CPU throttle, medians of each side.

    git clone -q . /tmp/before && git -C /tmp/before checkout -q <commit>
    .venv/bin/python bench/scoreboard_ab.py /tmp/before [--runs 40] [--game spy-team] [--size 1280x800]

Per load, in a fresh browser context: **drawn** as in `bench/scoreboard_load.py` (the first
animation frame whose board holds the players, checked by an init script), and the renderer's own
figures at that moment from DevTools' `Performance.getMetrics`: time in layout, style, script and
all tasks, and how many layouts and style recalculations. The order of the two sides alternates
run by run. This machine's speed moves over minutes: compare the two sides of one run, not runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scoreboard_load import WATCH
from tests.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.servers import running_companion

METRICS = [
    "LayoutDuration",
    "RecalcStyleDuration",
    "ScriptDuration",
    "TaskDuration",
    "LayoutCount",
    "RecalcStyleCount",
]
PLAYERS = ["Ann", "Bob", "Cid", "Dee"]


def cold_load(context: Any, url: str) -> dict[str, float]:
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    page.goto(url, wait_until="commit")
    drawn = cdp.send(
        "Runtime.evaluate", {"expression": "window.__drawn", "awaitPromise": True, "returnByValue": True}
    )
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    load = {"drawn": float(drawn["result"]["value"]) - float(page.evaluate("performance.timeOrigin"))}
    page.close()
    for name in METRICS:  # durations in seconds, counts as they are
        load[name] = metrics.get(name, 0.0) * (1000 if name.endswith("Duration") else 1)
    return load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (its own companion/ and web/)")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--game", default="spy-team")
    parser.add_argument("--size", default="1280x800")
    args = parser.parse_args()
    if CHROMIUM is None:
        print("Chromium is not installed (scripts/test installs it)")
        return 1
    from playwright.sync_api import sync_playwright

    width, height = (int(x) for x in args.size.split("x"))
    other = args.other.resolve()
    loads: dict[str, list[dict[str, float]]] = {"this tree": [], "other": []}
    with (
        tempfile.TemporaryDirectory() as folder,
        running_companion(Path(folder) / "this.db") as this,
        running_companion(Path(folder) / "other.db", cwd=other, env={"PYTHONPATH": str(other)}) as that,
        sync_playwright() as playwright,
    ):
        for server in (this, that):
            server.call("POST", "/api/games", {"game": args.game, "players": PLAYERS})
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        sides = [("this tree", this), ("other", that)]
        for run in range(args.runs):
            for name, server in sides if run % 2 == 0 else sides[::-1]:
                context = browser.new_context(viewport={"width": width, "height": height})
                context.add_init_script(WATCH)
                loads[name].append(cold_load(context, server.url + "/"))
                context.close()
        browser.close()
    print(f"{args.runs} cold loads per side, {args.game}, {args.size}, CPU throttled 4x; medians")
    print(f"  {'':<22} {'other':>8} {'this tree':>10}  this / other")
    for key in ["drawn", *METRICS]:
        a = statistics.median(x[key] for x in loads["other"])
        b = statistics.median(x[key] for x in loads["this tree"])
        print(f"  {key:<22} {a:8.1f} {b:10.1f}  {b / a if a else 0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
