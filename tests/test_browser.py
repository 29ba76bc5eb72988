"""The scoreboard in a real browser (Debian's Chromium driven by Playwright): it follows the table
live, without a reload, and announces cues."""

from __future__ import annotations

import os
import re
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
    # The card is used this round, lies on the table, and says who played it.
    red9 = page.locator('.mat button[data-card="spy-team/red-9"]')
    expect(red9).to_have_class(re.compile(r"\bused\b.*\bon-table\b"))
    expect(red9).to_have_attribute("data-by", "Ann")
    state: Any = server.call("GET", "/api/state")
    assert state["trick"][0]["card"] == "spy-team/red-9"
    # A refused tap shows the engine's message.
    page.click('.mat button[data-card="spy-team/red-9"]')
    expect(page.locator("#message")).to_contain_text("already")
    # Undo takes two taps: the first only arms the button.
    page.click("#undo")
    expect(page.locator("#undo")).to_have_text("Tap again to undo")
    assert server.call("GET", "/api/state")["played"] == ["spy-team/red-9"]
    page.click("#undo")
    expect(page.locator("#message")).to_have_text("Took back the last input.")
    expect(page.locator("#undo")).to_have_text("Undo last input")
    assert server.call("GET", "/api/state")["played"] == []
    assert errors == []


def play_trick(server: Server, winner: int, camouflage: bool = False) -> None:
    """Four taps making `winner` take the trick: all red (the winner the lowest) for Camouflage, else
    the winner plays the highest red, the leader (if someone else) a low red, the others low blues."""
    view = server.call("GET", "/api/state")
    played = set(view["played"])
    reds = [n for n in range(1, 25) if f"spy-team/red-{n}" not in played]
    blues = [n for n in range(1, 25) if f"spy-team/blue-{n}" not in played]
    leader = view["turn"]
    for step in range(4):
        seat = (leader + step) % 4
        if camouflage:
            card = f"red-{reds.pop(0) if seat == winner else reds.pop()}"
        elif seat == winner:
            card = f"red-{reds.pop()}"
        elif seat == leader:
            card = f"red-{reds.pop(0)}"
        else:
            card = f"blue-{blues.pop(0)}"
        server.call("POST", "/api/taps", {"card": f"spy-team/{card}"})


def test_the_scoreboard_announces_camouflage_and_sums_up_the_game(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server.url + "/")
    server.call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
    server.call("POST", "/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    expect(page.locator(".centre .who.team-a")).to_have_class(re.compile(r"\bdone\b"))
    expect(page.locator(".centre .who.team-b")).to_have_class(re.compile(r"\bwait\b"))
    server.call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
    expect(page.locator('.seat[data-seat="0"] .tag.turn')).to_be_visible()
    # Cid takes an all-red trick with the lowest card: the Camouflage banner comes first, then the
    # trick's, and the finished trick stays on the table with Cid's card marked until the next lead.
    play_trick(server, winner=2, camouflage=True)
    expect(page.locator("#banner.cue-camouflage")).to_contain_text("Camouflage")
    expect(page.locator("#banner.cue-trick-won")).to_contain_text("Cid wins the trick")
    expect(page.locator('.seat[data-seat="2"] .card.taken.best')).to_be_visible()
    expect(page.locator(".centre")).to_contain_text("Cid takes the trick")
    # Three rounds in which Bob (aiming for 1) takes 2 tricks: each time C.A.T. complete theirs.
    for cat_tile in (None, "2/4", "3/3"):  # round 1's missions are already chosen
        if cat_tile:
            cat = {"type": "mission", "seat": 0, "tile": cat_tile, "target": int(cat_tile[0])}
            server.call("POST", "/api/actions", cat)
            server.call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
        play_trick(server, winner=1)
        play_trick(server, winner=1)
    summary = page.locator(".spy-team .summary")
    expect(summary).to_contain_text("C.A.T. win the game!")
    expect(summary).to_contain_text("Ann & Cid")
    expect(summary).to_contain_text("Bob won 2 tricks aiming for 1")
    expect(page.locator(".team-panel.team-a")).to_have_class(re.compile(r"\bwon\b"))
    assert errors == []
