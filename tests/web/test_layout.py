"""Every game, in every state, fits phones (360-430 px wide) and tablets (768-1366 px, both
orientations): no sideways scrolling and no text lying over other text, on the scoreboard and on the
control page. One table and one browser page of each kind, resized from size to size. And on a 10"
tablet (1280x800) the scoreboard reads from 2 m: its key text 24 px or more, the rest 18 px or more."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.scripted_games import GAMES
from tests.servers import TOKEN, Server, running_companion

SIZES = [(360, 740), (390, 844), (430, 932), (768, 1024), (1024, 768), (800, 1280), (1280, 800), (1366, 1024)]
MEASURE = (Path(__file__).parents[1] / "js" / "layout.js").read_text()
# What the table reads first: names, scores, whose turn (the prompt, Peanuts' news), the latest play.
KEY = ".name, .score, .prompt, .news .big, .latest, .tricks, .card.played, .team-name"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_companion(tmp_path_factory.mktemp("layout") / "journal.db") as running:
        yield running


def problems(page: Page, where: str) -> list[str]:
    found = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(200)  # the scoreboard fits its type 100 ms after a resize
        measured: dict[str, Any] = page.evaluate(MEASURE, KEY)
        if measured["scrollWidth"] > width:
            found.append(f"{where} {width}x{height}: {measured['scrollWidth']} px wide")
        found += [f"{where} {width}x{height}: {overlap}" for overlap in measured["overlaps"]]
    return found


def test_every_game_and_state_fits_phones_and_tablets(browser: Browser, table: Server) -> None:
    pages = {"scoreboard": browser.new_page(), "control": browser.new_page()}
    errors: list[str] = []
    for page in pages.values():
        page.on("pageerror", lambda error: errors.append(str(error)))
    pages["scoreboard"].goto(table.url + "/")
    pages["control"].goto(f"{table.url}/control#token={TOKEN}")
    found = [p for name, page in pages.items() for p in problems(page, f"idle {name}")]
    for game, script in GAMES.items():
        for state in script(table.call):
            pages["scoreboard"].wait_for_function(f"document.body.dataset.game === {game!r}")
            found += [p for name, page in pages.items() for p in problems(page, f"{game} {state} {name}")]
    for page in pages.values():
        page.close()
    assert found == []
    assert errors == []


def test_the_scoreboard_reads_from_2_m_on_a_10_inch_tablet(browser: Browser, table: Server) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(table.url + "/")
    too_small = []
    for game, script in GAMES.items():
        for state in script(table.call):
            page.wait_for_function(f"document.body.dataset.game === {game!r}")
            page.wait_for_timeout(200)  # as in problems(): the type is fitted after a change
            texts = page.evaluate(MEASURE, KEY)["texts"]
            assert sum(text["key"] for text in texts) >= 4, f"{game} {state}: no names or scores found"
            too_small += [
                f"{game} {state}: {text['path']} {text['text']!r} {text['size']:.1f} px"
                for text in texts
                if text["size"] < (24 if text["key"] else 18) - 0.05
            ]
    page.close()
    assert too_small == []
