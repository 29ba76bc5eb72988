"""Scoreboard page load in Chromium with the CPU throttled 4x: time to the board showing the table's
state, and the bytes fetched before it, for the page with its first look and for the page of before.

    .venv/bin/python bench/scoreboard_load.py [--runs 7]

The daemon is `companion run` in another process with a Spy Team game of 4 players started. Each
run opens a fresh browser context (an empty cache), throttles the CPU 4x (Chrome DevTools'
Emulation.setCPUThrottlingRate) at 1280x800, loads a page and waits for the board to show the game's
players. Three pages, interleaved run by run (their order rotating):
- **first look**: `/`, the scoreboard as served now (issue 22): the view, the game's presentation and
  the cues inlined in the page, its renderer preloaded;
- **before**: `/?first-look=0`, the same page without its first look: the chain of before (the
  page, its scripts, the whole catalogue `/api/games`, the renderer, the event stream's first state);
- **floor**: a page with nothing in it from the same server (`/api/state` opened as a document),
  timed to its load event.
Per load:
- **drawn**: performance.now() (from navigation start) in the first animation frame in which the
  board holds the players, checked by an init script each frame (no Playwright code in the page while
  it loads);
- **bytes before the draw**: what reached the browser before that moment, headers and compressed
  bodies, data included: every response finished by then (Network.loadingFinished's
  encodedDataLength) and the chunks of one still open (the event stream: Network.dataReceived). The
  page's clock is matched to DevTools' by the document request's wallTime and timestamp;
- **bytes in all**: everything until 300 ms after the draw, and the number of requests;
- **warm**: the first-look page reloaded in the same context (what a tablet pays on a reload).
Goals (issue 22): drawn <= 300 ms median, bytes before the draw <= 40 KB.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.servers import running_companion

# Checked in every animation frame by a script of the page's own (an init script), so that no
# harness code runs on the throttled main thread during the load: Playwright's wait_for_function
# first compiles its injected script there (about 45 ms at 4x), which the page would be charged for.
WATCH = """(() => { window.__drawn = new Promise((drawn) => { const check = () => {
  const board = document.getElementById("board");
  if (board && board.querySelectorAll("*").length > 4 && document.body.innerText.includes("Dee"))
    drawn(performance.timeOrigin + performance.now());
  else requestAnimationFrame(check); }; requestAnimationFrame(check); }); })()"""
PAGES = {"first look": "/", "before": "/?first-look=0"}


@dataclass
class Traffic:
    """DevTools' network events of one page load."""

    finished: list[tuple[float, int]] = field(default_factory=list)  # (timestamp, bytes) per request
    chunks: dict[str, list[tuple[float, int]]] = field(default_factory=dict)  # open requests' data
    done: set[str] = field(default_factory=set)
    clock: float | None = None  # wall time - monotonic timestamp, seconds

    def sent(self, event: dict[str, Any]) -> None:
        if self.clock is None:
            self.clock = float(event["wallTime"]) - float(event["timestamp"])

    def data(self, event: dict[str, Any]) -> None:
        chunk = (float(event["timestamp"]), int(event["encodedDataLength"]))
        self.chunks.setdefault(event["requestId"], []).append(chunk)

    def finish(self, event: dict[str, Any]) -> None:
        self.done.add(event["requestId"])
        self.finished.append((float(event["timestamp"]), int(event["encodedDataLength"])))

    def before(self, wall_ms: float) -> int:
        """Bytes received before the page's wall-clock moment `wall_ms`."""
        assert self.clock is not None
        at = wall_ms / 1000 - self.clock
        total = sum(size for t, size in self.finished if t <= at)
        for request, chunks in self.chunks.items():
            if request not in self.done:
                total += sum(size for t, size in chunks if t <= at)
        return total


@dataclass
class Load:
    ms: float
    before_draw: int
    total: int
    requests: int


def load(context: Any, url: str, rendered: bool) -> Load:
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
    traffic = Traffic()
    cdp.on("Network.requestWillBeSent", traffic.sent)
    cdp.on("Network.dataReceived", traffic.data)
    cdp.on("Network.loadingFinished", traffic.finish)
    page.goto(url, wait_until="commit")
    if rendered:
        drawn = cdp.send(
            "Runtime.evaluate", {"expression": "window.__drawn", "awaitPromise": True, "returnByValue": True}
        )
        wall = float(drawn["result"]["value"])
        ms = wall - float(page.evaluate("performance.timeOrigin"))
    else:
        page.wait_for_load_state("load")
        ms = float(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventStart"))
        wall = ms + float(page.evaluate("performance.timeOrigin"))
    page.wait_for_timeout(300)  # late requests (an event stream's first bytes are counted as chunks)
    before = traffic.before(wall)
    total = sum(size for _, size in traffic.finished) + sum(
        size
        for request, chunks in traffic.chunks.items()
        if request not in traffic.done
        for _, size in chunks
    )
    requests = len(traffic.done | set(traffic.chunks))
    page.close()
    return Load(ms, before, total, requests)


def med(values: list[float]) -> float:
    return float(statistics.median(values))


def report(name: str, loads: list[Load]) -> None:
    drawn, before = med([x.ms for x in loads]), med([x.before_draw for x in loads]) / 1024
    total, requests = med([x.total for x in loads]) / 1024, med([x.requests for x in loads])
    print(
        f"  {name:<12} drawn {drawn:6.0f} ms (min {min(x.ms for x in loads):4.0f}),"
        f" before the draw {before:5.1f} KB, in all {total:5.1f} KB in {requests:.0f} requests"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if CHROMIUM is None:
        print("Chromium is not installed (scripts/test installs it)")
        return 1
    from playwright.sync_api import sync_playwright

    loads: dict[str, list[Load]] = {name: [] for name in [*PAGES, "warm", "floor"]}
    with (
        tempfile.TemporaryDirectory() as folder,
        running_companion(Path(folder) / "journal.db") as server,
        sync_playwright() as playwright,
    ):
        server.call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        sides = ["floor", *PAGES]
        for run in range(args.runs):
            for side in sides[run % 3 :] + sides[: run % 3]:  # the order rotates run by run
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                context.add_init_script(WATCH)
                if side == "floor":
                    loads["floor"].append(load(context, server.url + "/api/state", rendered=False))
                else:
                    loads[side].append(load(context, server.url + PAGES[side], rendered=True))
                    if side == "first look":
                        loads["warm"].append(load(context, server.url + "/", rendered=True))
                context.close()
        browser.close()

    print(f"{args.runs} runs, CPU throttled 4x, 1280x800, Chromium {CHROMIUM}; medians")
    for name in [*PAGES, "warm"]:
        report(name, loads[name])
    floor = med([x.ms for x in loads["floor"]])
    new, old = loads["first look"], loads["before"]
    print(f"  floor (an empty page, to its load event): {floor:.0f} ms")
    drawn = med([x.ms for x in new]) / med([x.ms for x in old])
    before = med([x.before_draw for x in new]) / med([x.before_draw for x in old])
    print(
        f"  first look / before: drawn {drawn:.2f}x, bytes before the draw {before:.2f}x;"
        f" first look / floor: {med([x.ms for x in new]) / floor:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
