"""How a test waits: on the very thing it asserts, with a deadline; never on a sleep, nor on a proxy
(a state, when the cue it checks is sent a moment after the state). docs/architecture.md, "Testing".

    wait_for(lambda: table.state()["played"] == cards)    # returns the first true value
    wait_polls(reader.status, 20)                          # a card held: 20 looks at the field passed

A check that nothing happens (a held card is not counted twice) waits on a positive event that
proves the time passed with the system at work, such as a reader's poll counter, then asserts.
In a browser: `WATCH_STREAM` (the page's own EventSource, watched), `wait_drawn` (that very state
drawn) and `wait_settled` (its animations over).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    condition: Callable[[], Any], timeout: float = 10.0, interval: float = 0.01, what: str | None = None
) -> Any:
    """Poll `condition` until it returns something true; fail the test after `timeout` seconds,
    naming `what` it waited for (else the condition itself)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or condition}")
        time.sleep(interval)


def wait_polls(status: Callable[[], dict[str, Any]], polls: int = 10, timeout: float = 10.0) -> None:
    """Wait until the reader behind `status` (its `status()`, or its /healthz entry) has looked at its
    field `polls` more times. For a check that nothing happened while a card lay there: time passed
    with the reader at work, however slow the machine, rather than a sleep that may pass idle."""
    start = status()["polls"]
    wait_for(lambda: status()["polls"] >= start + polls, timeout)


# In a page: no finite animation or transition is still running (an endless one, a pulse, may go on).
SETTLED = """() => document.getAnimations().every(
  (a) => a.effect.getComputedTiming().iterations === Infinity || a.playState !== "running")"""


def wait_settled(page: Any, timeout: float = 10.0) -> None:
    """Wait until a Playwright `page` has finished its animations: what it shows is in its place."""
    page.wait_for_function(SETTLED, timeout=timeout * 1000)


# Added to a page before it loads: what its event stream brings, the last state in
# `window.lastState` and every cue in `window.cues` (the browser's own EventSource, watched).
WATCH_STREAM = """window.cues = []; const Original = window.EventSource;
window.EventSource = function (...args) {
  const source = new Original(...args);
  source.addEventListener("state", (e) => { window.lastState = JSON.parse(e.data); });
  source.addEventListener("cue", (e) => window.cues.push(JSON.parse(e.data)));
  return source;
};
Object.setPrototypeOf(window.EventSource, Original);  // its constants (CLOSED) too"""


def wait_drawn(page: Any, view: dict[str, Any], timeout: float = 10.0) -> None:
    """Wait until `page` (opened with WATCH_STREAM) has drawn `view`, the table's current state: its
    stream's last state is `view` and the page drew that view's game (a page draws a state, and fits
    its type, at once), then until what it drew has grown into place. Not a wait on the game alone:
    a game's later states have the same game."""
    drawn = [[view, view["game"]]] if view.get("game") else [[view, ""], [view, "idle"]]
    wait_for(lambda: page.evaluate("[window.lastState, document.body.dataset.game]") in drawn, timeout)
    wait_settled(page, timeout)
