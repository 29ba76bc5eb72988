"""The enrollment panel (web/js/enroll.js) on the control page, in a real browser: an unknown tag
shows up with its UID and is enrolled with a click; a deck is walked through with its progress."""

from __future__ import annotations

import urllib.error

import pytest
from playwright.sync_api import Browser, expect

from tests.servers import TOKEN, Server

UID = "04a1b2c3d4e5f6"


def test_enroll_an_unknown_tag_and_walk_a_deck_from_the_tablet(browser: Browser, server: Server) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server.url}/control#token={TOKEN}")
    panel = page.locator("#enroll")
    spy_team = panel.locator('.enroll-game[data-game="spy-team"]')
    expect(spy_team).to_contain_text("0/48 cards have a tag")

    # A tag nobody enrolled is tapped (the virtual mat's path): the panel lists its UID.
    with pytest.raises(urllib.error.HTTPError) as refused:
        server.call("POST", "/api/taps", {"uid": UID})
    assert refused.value.code == 409
    row = panel.locator(f'.enroll-unknown[data-uid="{UID}"]')
    expect(row).to_contain_text(UID)
    row.locator("select").select_option("spy-team/red-1")
    row.get_by_role("button", name="Enroll").click()
    expect(row).to_have_count(0)
    expect(spy_team).to_contain_text("1/48 cards have a tag")
    assert server.call("GET", "/api/cards")["tags"][0]["card"] == "spy-team/red-1"

    # The deck, missing cards only (ticked by default once some have a tag).
    spy_team.get_by_role("button", name="Enroll deck").click()
    expect(panel.locator(".enroll-session")).to_contain_text("Tap Red 2")
    expect(panel.locator(".enroll-session")).to_contain_text("0/47")
    server.call("POST", "/api/cards/session/tap", {"uid": "04a1b2c3d4e5f7"})
    expect(panel.locator(".enroll-session")).to_contain_text("Tap Red 3")
    expect(panel.locator(".enroll-session")).to_contain_text("1/47")
    expect(panel.locator(".enroll-session progress")).to_have_attribute("value", "1")
    panel.get_by_role("button", name="Stop").click()
    expect(panel.locator(".enroll-session")).to_have_count(0)
    expect(spy_team).to_contain_text("2/48 cards have a tag")
    assert errors == []
