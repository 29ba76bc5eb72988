"""The scoreboard in a real browser (Debian's Chromium driven by Playwright): it follows the table
live, without a reload, and announces cues."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers import TOKEN, Server, running_companion

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("Chromium is not installed (scripts/test installs it where it can)", allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM, "Chromium is required in CI"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with running_companion(tmp_path / "journal.db") as running:
        yield running


def open_page(browser: Browser, url: str) -> tuple[Page, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    return page, errors


def test_the_scoreboard_follows_taps_live(browser: Browser, server: Server, tmp_path: Path) -> None:
    page, errors = open_page(browser, server.url + "/")
    expect(page.locator(".idle")).to_contain_text("No game yet")
    server.call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
    expect(page.locator("#title")).to_have_text("Spy Team")
    server.call("POST", "/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    server.call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    expect(page.locator(".team-panel.team-a .mission")).to_contain_text("Ann 1")
    # Taps arrive while the page stays loaded: the played card shows in Ann's seat.
    server.call("POST", "/api/taps", {"card": "spy-team/red-17"})
    expect(page.locator('.seat[data-seat="0"] .card.played')).to_have_text("17")
    expect(page.locator("#prompt")).to_contain_text("Bob")
    for card in ("spy-team/red-20", "spy-team/blue-3", "spy-team/blue-4"):
        server.call("POST", "/api/taps", {"card": card})
    # Bob's 20 takes the trick: a banner announces it and his count goes up.
    expect(page.locator("#banner")).to_contain_text("Bob")
    expect(page.locator('.seat[data-seat="1"] .tricks')).to_contain_text("1 / 3")
    page.screenshot(path=str(tmp_path / "scoreboard.png"))
    assert errors == []


def test_the_control_page_plays_a_card_from_the_virtual_mat(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, f"{server.url}/control#token={TOKEN}")
    page.select_option("#game", "spy-team")
    page.fill("#players", "Ann, Bob, Cid, Dee")
    page.click("#start-form button[type=submit]")
    expect(page.locator("#message")).to_have_text("Game started.")
    # The engine's legal mission choices are buttons; choose one for each team.
    page.get_by_role("button", name="C.A.T.: Ann takes 1, Cid takes 5 (1/5)").click()
    page.get_by_role("button", name="B.I.R.D.: Bob takes 1, Dee takes 5 (1/5)").click()
    expect(page.locator("#prompt")).to_contain_text("Ann")
    page.click('.mat button[data-card="spy-team/red-9"]')
    expect(page.locator('.mat button[data-card="spy-team/red-9"]')).to_have_class("red used")
    state: Any = server.call("GET", "/api/state")
    assert state["trick"][0]["card"] == "spy-team/red-9"
    # A refused tap shows the engine's message.
    page.click('.mat button[data-card="spy-team/red-9"]')
    expect(page.locator("#message")).to_contain_text("already")
    assert errors == []
