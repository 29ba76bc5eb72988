"""Scoreboard page load in Chromium with the CPU throttled 4x: bytes transferred, requests, first render.

    .venv/bin/python bench/scoreboard_load.py [--runs 5]

The daemon is `companion run` in another process with a Spy Team game of 4 players started. Each
run opens a fresh browser context (an empty cache), throttles the CPU 4x (Chrome DevTools'
Emulation.setCPUThrottlingRate), loads `/`, and waits for the board to show the game's players.
It reports:
- cold: bytes on the wire (the sum of Network.loadingFinished's encodedDataLength: headers and
  compressed bodies), the number of requests, and the first render (performance.now() when the
  board first holds the players, i.e. from navigation start);
- warm: the same page reloaded in the same context (what a tablet pays on a reload).
Beside it, interleaved run by run, the floor: a page with nothing in it from the same server
(`/api/state` opened as a document), timed the same way to its load event.
Goals (issue 12): cold load <= 40 KB transferred, first render <= 300 ms at 4x throttle.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.servers import running_companion

RENDERED = "document.querySelectorAll('#board *').length > 4 && document.body.innerText.includes('Dee')"


def load(context: Any, url: str, rendered: str | None) -> tuple[int, int, float]:
    """(bytes on the wire, requests, ms to first render or to the load event) for one page load."""
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    sizes: list[int] = []
    cdp.on("Network.loadingFinished", lambda event: sizes.append(int(event["encodedDataLength"])))
    page.goto(url, wait_until="commit")
    if rendered:
        page.wait_for_function(rendered, polling="raf", timeout=30_000)
        ms = float(page.evaluate("performance.now()"))
    else:
        page.wait_for_load_state("load")
        ms = float(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventStart"))
    page.wait_for_timeout(300)  # late requests (an event stream's first bytes are not counted)
    page.close()
    return sum(sizes), len(sizes), ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if CHROMIUM is None:
        print("Chromium is not installed (scripts/test installs it)")
        return 1
    from playwright.sync_api import sync_playwright

    cold: list[tuple[int, int, float]] = []
    warm: list[tuple[int, int, float]] = []
    floor: list[float] = []
    with (
        tempfile.TemporaryDirectory() as folder,
        running_companion(Path(folder) / "journal.db") as server,
        sync_playwright() as playwright,
    ):
        server.call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(args.runs):
            context = browser.new_context()
            floor.append(load(context, server.url + "/api/state", None)[2])
            context.close()
            context = browser.new_context()
            cold.append(load(context, server.url + "/", RENDERED))
            warm.append(load(context, server.url + "/", RENDERED))
            context.close()
        browser.close()

    def med(values: list[float]) -> float:
        return float(statistics.median(values))

    print(f"{args.runs} runs, CPU throttled 4x, Chromium {CHROMIUM}")
    print(f"  cold: {med([c[0] for c in cold]) / 1024:.1f} KB in {med([c[1] for c in cold]):.0f} requests,")
    print(f"        first render {med([c[2] for c in cold]):.0f} ms (min {min(c[2] for c in cold):.0f})")
    print(f"  warm: {med([w[0] for w in warm]) / 1024:.1f} KB in {med([w[1] for w in warm]):.0f} requests,")
    print(f"        first render {med([w[2] for w in warm]):.0f} ms")
    print(f"  floor (an empty page, to its load event): {med(floor):.0f} ms")
    print(f"  first render / floor, medians: {med([c[2] for c in cold]) / med(floor):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
