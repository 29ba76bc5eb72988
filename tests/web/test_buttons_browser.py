"""The control page's virtual buttons (issue 21): a seat button per player, Next and Undo beside the
virtual mat, pushed through `POST /api/buttons`; a click presses, keeping it pressed holds."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.servers import TOKEN, Server


def test_a_spy_game_is_set_up_and_played_with_the_virtual_buttons(browser: Any, server: Server) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server.url}/control#token={TOKEN}")
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob", "Cy"]})
    ann = page.locator(".pad-button[data-button='seat-0']")
    expect(ann).to_have_attribute("title", "press: Show the next colour; hold: Ann plays green")
    expect(page.locator("#actions button", has_text="Show the next colour")).to_have_count(0)  # the pad's own

    ann.click()  # a press: the next colour
    expect(page.locator("#prompt")).to_contain_text("hold your seat button to play red")
    box = ann.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()  # a hold: the page holds it, then the table holds it for its undo_hold
    expect(page.locator("#prompt")).to_contain_text("Bob: tap the Spy card", timeout=15_000)
    page.mouse.up()
    assert server.call("GET", "/api/state")["players"][0]["colour"] == "red"

    server.call("POST", "/api/taps", {"card": "spy/green-spy"})
    server.call("POST", "/api/taps", {"card": "spy/blue-spy"})
    nxt = page.locator(".pad-button[data-button='next']")
    expect(nxt).to_have_attribute("title", "press: Ann passes (end the turn)")
    nxt.click()
    expect(page.locator("#prompt")).to_contain_text("Bob's turn")
    page.locator(".pad-button[data-button='seat-2']").click()  # a press never puts anyone out
    expect(page.locator("#message")).to_contain_text("Cy's button answers nothing now.")
    assert server.call("GET", "/api/state")["players"][2]["eliminated"] is False
    # Everything fits a phone's width.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert errors == []
    page.close()
