"""The scoreboard in a real browser (Debian's Chromium driven by Playwright): it follows the table
live, without a reload, and announces cues."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.servers import TOKEN, Server
from tests.spy_team_play import trick_cards


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
    # A refused tap shows the engine's message (a second click within 600 ms would be one tap).
    page.wait_for_timeout(650)
    page.click('.mat button[data-card="spy-team/red-9"]')
    expect(page.locator("#message")).to_contain_text("already")
    # Undo takes two taps: the first only arms the button.
    page.click("#undo")
    expect(page.locator("#undo")).to_have_text("Tap again to undo")
    assert server.call("GET", "/api/state")["played"] == ["spy-team/red-9"]
    page.click("#undo")
    expect(page.locator("#message")).to_have_text("Took back: Ann played Red 9.")
    expect(page.locator("#undo")).to_have_text("Undo last input")
    assert server.call("GET", "/api/state")["played"] == []
    assert errors == []


def play_trick(server: Server, winner: int, camouflage: bool = False) -> None:
    """Four taps on the real server making `winner` take the trick (see `trick_cards`)."""
    for card in trick_cards(server.call("GET", "/api/state"), winner, camouflage):
        server.call("POST", "/api/taps", {"card": card})


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
    # The story beside the board: its latest line in the top bar, every play one tap away.
    expect(page.locator("#story summary")).to_contain_text("Trick 1: Cid won it with Red")
    page.click("#story summary")
    expect(page.locator("#story li")).to_have_count(2 + 4 + 1)  # two missions, four plays, the trick
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
    # The game-over summary of the whole game, with each round.
    expect(page.locator("#story summary")).to_contain_text("Game over: C.A.T. (Ann and Cid) win the game.")
    expect(page.locator("#story .summary p")).to_have_count(1 + 3 + 1)  # the end, 3 rounds, the score
    assert errors == []


def test_the_spy_mat_offers_only_the_cards_in_play_and_a_dropped_card_takes_two_taps(
    browser: Browser, server: Server
) -> None:
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob", "Cy"]})
    page, errors = open_page(browser, f"{server.url}/control#token={TOKEN}")
    mat = page.locator("#mat")
    # Three players: every colour, but not the extra Bomb 2 of green and red (two-player cards).
    expect(mat.locator('button[data-card="spy/purple-bomb-2"]')).to_have_count(1)
    expect(mat.locator('button[data-card="spy/green-bomb-2"]')).to_have_count(1)
    expect(mat.locator('button[data-card="spy/green-bomb-2-extra"]')).to_have_count(0)
    expect(mat.locator('button[data-card="spy/red-bomb-2-extra"]')).to_have_count(0)
    for colour in ("green", "red", "purple"):
        server.call("POST", "/api/taps", {"card": f"spy/{colour}-spy"})
    # Nobody plays blue: its cards are dimmed (the engine would refuse them).
    expect(mat.locator('button[data-card="spy/blue-safe-1"]')).to_have_class(re.compile(r"\bknown\b"))
    # "Bob dropped a card" puts Bob out: the first tap only arms the button, like Undo.
    dropped = page.get_by_role("button", name="Bob dropped a card")
    dropped.click()
    expect(dropped).to_have_text("Tap again: Bob dropped a card")
    assert server.call("GET", "/api/state")["players"][1]["eliminated"] is False
    dropped.click()
    expect(page.locator("#message")).to_have_text("Done: Bob dropped a card")
    assert server.call("GET", "/api/state")["players"][1]["eliminated"] is True
    expect(mat.locator('button[data-card="spy/red-bomb-1"]')).to_have_attribute("data-by", "Bob is out")
    # Two players: only green and red, each with its extra Bomb 2.
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob"]})
    expect(mat.locator('button[data-card="spy/purple-spy"]')).to_have_count(0)
    expect(mat.locator('button[data-card="spy/green-bomb-2-extra"]')).to_have_count(1)
    expect(mat.locator('button[data-card="spy/red-bomb-2-extra"]')).to_have_count(1)
    assert errors == []


def test_the_peanuts_mat_dims_the_cards_the_table_can_see(browser: Browser, server: Server) -> None:
    server.call("POST", "/api/games", {"game": "peanuts", "players": ["Ann", "Bob", "Cy"]})
    for role in ("seer-1", "informant-1", "handler-1"):
        server.call("POST", "/api/taps", {"card": f"peanuts/{role}"})
    page, errors = open_page(browser, f"{server.url}/control#token={TOKEN}")
    seer = page.locator('#mat button[data-card="peanuts/seer-1"]')
    expect(seer).to_have_class(re.compile(r"\bknown\b"))
    expect(seer).to_have_attribute("data-by", "Ann: Role")
    # Three players: the second Assassin is set aside, face up.
    aside = page.locator('#mat button[data-card="peanuts/assassin-2"]')
    expect(aside).to_have_attribute("data-by", "set aside")
    # A card nobody has seen stays as it is.
    unseen = page.locator('#mat button[data-card="peanuts/agent-1"]')
    expect(unseen).not_to_have_class(re.compile(r"\bknown\b"))
    assert errors == []


@pytest.mark.parametrize("size", [(768, 1024), (1024, 768)])
def test_five_peanuts_players_fit_the_tablet_without_scrolling(
    browser: Browser, server: Server, size: tuple[int, int]
) -> None:
    server.call("POST", "/api/games", {"game": "peanuts", "players": ["Ann", "Bob", "Cy", "Dana", "Eve"]})
    for role in ("seer-1", "secret-police-1", "agent-1", "handler-1", "informant-1"):
        server.call("POST", "/api/taps", {"card": f"peanuts/{role}"})
    page, errors = open_page(browser, server.url + "/")
    page.set_viewport_size({"width": size[0], "height": size[1]})
    expect(page.locator(".peanuts .player")).to_have_count(5)
    # The board fits itself again after a resize, in the page's own time: wait until it has (or 3 s),
    # then check every seat and say which one does not fit.
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(
            """() => {
                const top = document.querySelector("#prompt").getBoundingClientRect().top;
                return [...document.querySelectorAll(".peanuts .player")]
                    .every(seat => seat.getBoundingClientRect().bottom <= top + 1);
            }""",
            timeout=3000,
        )
    prompt_top = page.locator("#prompt").bounding_box()["y"]  # type: ignore[index]
    for seat in range(5):
        box = page.locator(f'.peanuts .player[data-seat="{seat}"]').bounding_box()
        assert box is not None
        assert box["y"] + box["height"] <= prompt_top + 1, f"seat {seat} runs under the prompt"
        assert box["x"] + box["width"] <= size[0] + 1
    scroll, height = page.locator("#board").evaluate("board => [board.scrollHeight, board.clientHeight]")
    assert scroll <= height + 1, "the board scrolls"
    assert errors == []


def test_the_banners_keep_up_with_quick_taps(browser: Browser, server: Server) -> None:
    page, errors = open_page(browser, server.url + "/")
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob", "Cy"]})
    for colour in ("green", "red", "purple"):
        server.call("POST", "/api/taps", {"card": f"spy/{colour}-spy"})
    expect(page.locator('.player[data-seat="0"] .tag.turn')).to_be_visible()
    page.wait_for_timeout(3000)  # the setup's banners are over
    # Three quick taps: Ann lights a bomb of Bob's, Bob one of Ann's, Cy spies Ann's lit bomb: BOOM.
    # The board shows Cy out at once; the BOOM banner may not trail behind the two TSSS banners.
    for card in ("spy/red-bomb-2", "spy/green-bomb-1", "spy/green-bomb-1"):
        server.call("POST", "/api/taps", {"card": card})
    expect(page.locator('.player[data-seat="2"] .tag.out')).to_be_visible()
    expect(page.locator("#banner.cue-boom.show")).to_be_visible(timeout=1500)
    expect(page.locator("#banner.cue-boom")).to_contain_text("Green Bomb 1")  # Ann shows it to all
    assert errors == []
