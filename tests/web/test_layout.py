"""Every game, in every state, fits phones (360-430 px wide) and tablets (768-1366 px, both
orientations): no sideways scrolling and no text lying over other text, on the scoreboard and on the
control page. One table and one browser page of each kind, resized from size to size. And on a 10"
tablet (1280x800) the scoreboard reads from 2 m: its key text 24 px or more, the rest 18 px or more."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.scripted_games import GAMES
from tests.servers import TOKEN, Server, running_companion
from tests.waiting import WATCH_STREAM, wait_drawn, wait_for

SIZES = [(360, 740), (390, 844), (430, 932), (768, 1024), (1024, 768), (800, 1280), (1280, 800), (1366, 1024)]
MEASURE = (Path(__file__).parents[1] / "js" / "layout.js").read_text()
# What the table reads first: names, scores, whose turn (the prompt, Peanuts' news), the latest play.
KEY = ".name, .score, .prompt, .news .big, .latest, .tricks, .card.played, .team-name"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_companion(tmp_path_factory.mktemp("layout") / "journal.db") as running:
        yield running


def new_page(browser: Browser, **options: Any) -> Page:
    page = browser.new_page(**options)
    page.add_init_script(WATCH_STREAM)
    return page


def shown(page: Page, table: Server) -> None:
    """Wait until `page` has drawn the table's current state, measured then."""
    wait_drawn(page, table.call("GET", "/api/state"))


def layout_problems(page: Page, width: int) -> list[str]:
    measured: dict[str, Any] = page.evaluate(MEASURE, KEY)
    found = [f"{measured['scrollWidth']} px wide"] if measured["scrollWidth"] > width else []
    return found + list(measured["overlaps"])


def settled_problems(page: Page, width: int) -> list[str]:
    """The layout's problems once it settled: the scoreboard fits its type 100 ms after a resize, so
    wait (5 s at most) for no problem, the very thing asserted, and give what is left if it never came."""
    left: list[str] = []

    def fits() -> bool:
        left[:] = layout_problems(page, width)
        return not left

    with contextlib.suppress(AssertionError):
        wait_for(fits, timeout=5)
    return left


def problems(page: Page, where: str) -> list[str]:
    found = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        found += [f"{where} {width}x{height}: {problem}" for problem in settled_problems(page, width)]
    return found


def test_every_game_and_state_fits_phones_and_tablets(browser: Browser, table: Server) -> None:
    pages = {"scoreboard": new_page(browser), "control": new_page(browser)}
    errors: list[str] = []
    for page in pages.values():
        page.on("pageerror", lambda error: errors.append(str(error)))
    pages["scoreboard"].goto(table.url + "/")
    pages["control"].goto(f"{table.url}/control#token={TOKEN}")
    for page in pages.values():
        shown(page, table)
    found = [p for name, page in pages.items() for p in problems(page, f"idle {name}")]
    for game, script in GAMES.items():
        for state in script(table.call):
            for page in pages.values():
                shown(page, table)
            found += [p for name, page in pages.items() for p in problems(page, f"{game} {state} {name}")]
    for page in pages.values():
        page.close()
    assert found == []
    assert errors == []


def test_the_scoreboard_reads_from_2_m_on_a_10_inch_tablet(browser: Browser, table: Server) -> None:
    page = new_page(browser, viewport={"width": 1280, "height": 800})
    page.goto(table.url + "/")
    too_small = []
    for game, script in GAMES.items():
        for state in script(table.call):
            shown(page, table)  # drawn, and its type fitted (no resize here: no timer either)
            texts = page.evaluate(MEASURE, KEY)["texts"]
            assert sum(text["key"] for text in texts) >= 4, f"{game} {state}: no names or scores found"
            too_small += [
                f"{game} {state}: {text['path']} {text['text']!r} {text['size']:.1f} px"
                for text in texts
                if text["size"] < (24 if text["key"] else 18) - 0.05
            ]
    page.close()
    assert too_small == []
