"""The control page's flow and the scoreboard's connection, in Chromium: controls locked without a
token and a wrong one said in plain words, the main next step standing out, one tap for a double
click, "Play again", the new-game form following the game, a warning before undoing a finished game,
and a scoreboard that dims after 3 s without the table and comes back by itself; a refusal said only
on the device that caused it; colours told apart under a deuteranopia simulation."""

from __future__ import annotations

import base64
import itertools
import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, expect

from tests.scripted_games import spy
from tests.servers import TOKEN, Server, running_companion
from tests.waiting import WATCH_STREAM, wait_settled

# Resolves once the page has painted twice since: what was just changed is on the screen.
PAINTED = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def page_at(browser: Browser, url: str, width: int = 390, height: int = 844) -> Page:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(10_000)
    page.goto(url)
    return page


def test_controls_need_a_token_and_a_wrong_one_is_said_plainly(browser: Browser, server: Server) -> None:
    page = page_at(browser, server.url + "/control")
    expect(page.locator("#undo")).to_be_disabled()
    expect(page.locator("#start-form button[type=submit]")).to_be_disabled()
    page.fill("#token", "not-the-token")
    page.click("#token-form button[type=submit]")
    expect(page.locator("#undo")).to_be_enabled()
    page.fill("#players", "Ann, Bob, Cid, Dee")
    page.click("#start-form button[type=submit]")
    message = page.locator("#message")
    expect(message).to_contain_text("did not accept this device's token")
    assert "Bearer" not in message.inner_text()
    page.close()


def test_the_main_step_stands_out_and_a_double_click_is_one_tap(browser: Browser, server: Server) -> None:
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob"]})
    page = page_at(browser, f"{server.url}/control#token={TOKEN}")
    taps: list[str] = []
    page.on(
        "request", lambda request: taps.append(request.method) if request.url.endswith("/api/taps") else None
    )
    page.dblclick('#mat button[data-card="spy/green-spy"]')  # both clicks handled once it returns
    expect(page.locator("#message")).to_have_text("Tap sent.")
    assert taps == ["POST"]  # the second click sent nothing
    state = server.call("GET", "/api/state")
    assert [p["colour"] for p in state["players"]] == ["green", None]  # one claim, no refusal
    server.call("POST", "/api/taps", {"card": "spy/red-spy"})
    main = page.locator("#actions button.primary")
    expect(main).to_have_text(re.compile("passes"))
    assert main.evaluate("b => b === b.parentElement.firstElementChild || getComputedStyle(b).order === '-1'")
    assert float(main.evaluate("b => parseFloat(getComputedStyle(b).fontSize)")) > float(
        page.locator("#undo").evaluate("b => parseFloat(getComputedStyle(b).fontSize)")
    )
    page.close()


def test_play_again_the_form_follows_and_undo_warns_after_game_over(browser: Browser, server: Server) -> None:
    host = page_at(browser, f"{server.url}/control#token={TOKEN}")
    other = page_at(browser, f"{server.url}/control#token={TOKEN}", 1280, 800)
    list(spy(server.call))  # a SPY game to its end, from "another device"
    # Every device's form shows the game being played.
    for page in (host, other):
        expect(page.locator("#game")).to_have_value("spy")
        expect(page.locator("#players")).to_have_value("Annabel, Bartholomew, Cy")
    host.click("#undo")
    expect(host.locator("#undo")).to_have_text("Tap again: undo brings the finished game back")
    host.locator("#undo").evaluate("b => b.blur()")
    play_again = host.get_by_role("button", name="Play again (same players)")
    play_again.click()
    expect(host.locator("#message")).to_have_text("Game started.")
    state = server.call("GET", "/api/state")
    assert state["game"] == "spy" and state["status"] != "game-over"
    assert [p["name"] for p in state["players"]] == ["Annabel", "Bartholomew", "Cy"]
    host.close()
    other.close()


def test_the_scoreboard_dims_without_the_table_and_resyncs(browser: Browser, tmp_path: Path) -> None:
    db = tmp_path / "journal.db"
    with running_companion(db) as first:
        port = first.port
        page = page_at(browser, first.url + "/", 1280, 800)
        expect(page.locator("#health")).to_have_text("Live")
        first.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob"]})
        expect(page.locator("#title")).to_have_text("SPY")
    # The table is gone: after 3 s the board dims and says so.
    expect(page.locator("body")).to_have_class(re.compile(r"\boffline\b"), timeout=8_000)
    expect(page.locator("#offline")).to_contain_text("No connection to the table")
    with running_companion(db, port=port) as back:
        back.call("POST", "/api/taps", {"card": "spy/green-spy"})
        expect(page.locator("body")).not_to_have_class(re.compile(r"\boffline\b"), timeout=15_000)
        expect(page.locator("#offline")).to_be_hidden()
        expect(page.locator('.seat[data-seat="0"]')).to_have_class(re.compile(r"\bgreen\b"))
    page.close()


def test_the_scoreboard_can_read_its_announcements_aloud(browser: Browser, server: Server) -> None:
    """The Web Speech API is the boundary: the page's calls to it are recorded."""
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.add_init_script(
        "window.spoken = []; window.speechSynthesis.speak = (u) => window.spoken.push(u.text);"
        "window.speechSynthesis.cancel = () => {};"
    )
    page.goto(server.url + "/")
    voice = page.locator("#voice")
    expect(voice).to_have_text("Voice off")
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob"]})
    expect(page.locator("#title")).to_have_text("SPY")
    assert page.evaluate("window.spoken") == []  # off: nothing is said
    voice.click()
    expect(voice).to_have_text("Voice on")
    server.call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
    page.wait_for_function("window.spoken.length >= 2")
    spoken = page.evaluate("window.spoken")
    assert spoken[0] == "Voice on" and "Spy Team" in spoken[1]
    page.reload()  # the choice stays on this device
    expect(page.locator("#voice")).to_have_text("Voice on")
    page.close()


def test_colours_are_told_apart_without_their_hue(browser: Browser, server: Server) -> None:
    """SPY's colours carry a shape beside the player's name; Spy Team's cards one in their corner."""
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob", "Cy"]})
    for colour in ("green", "red", "purple"):
        server.call("POST", "/api/taps", {"card": f"spy/{colour}-spy"})
    page = page_at(browser, server.url + "/", 1280, 800)
    marks = page.locator(".spy .player header .colour-mark")
    expect(marks).to_have_count(3)
    assert len(set(marks.all_inner_texts())) == 3
    server.call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
    server.call("POST", "/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    server.call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
    server.call("POST", "/api/taps", {"card": "spy-team/red-9"})
    server.call("POST", "/api/taps", {"card": "spy-team/blue-3"})
    symbol = "c => getComputedStyle(c, '::before').content"
    expect(page.locator(".spy-team .card.red.played")).to_have_count(1)
    red = page.locator(".spy-team .card.red.played").evaluate(symbol)
    blue = page.locator(".spy-team .card.blue.played").evaluate(symbol)
    assert red != blue and "none" not in (red, blue)
    page.close()


def test_a_refusal_is_shown_by_the_device_that_caused_it_and_briefly_by_the_scoreboard(
    browser: Browser, server: Server
) -> None:
    """Two control pages in one browser: only the one whose tap was refused says so."""
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob"]})
    mine = page_at(browser, f"{server.url}/control#token={TOKEN}")
    other = browser.new_page(viewport={"width": 390, "height": 844})
    other.set_default_timeout(10_000)
    other.add_init_script(WATCH_STREAM)
    other.goto(f"{server.url}/control#token={TOKEN}")
    board = page_at(browser, server.url + "/", 1280, 800)
    expect(board.locator("#title")).to_have_text("SPY")
    expect(other.locator('#mat button[data-card="spy/green-safe-1"]')).to_be_enabled()
    mine.click('#mat button[data-card="spy/green-safe-1"]')  # no colour claimed yet: refused
    expect(mine.locator("#message.bad.show")).to_have_count(1)
    refusal = (mine.locator("#message").text_content() or "").strip()
    assert refusal
    banner = board.locator("#banner.show")
    expect(banner).to_have_attribute("data-cue", "error")
    assert refusal in (banner.text_content() or "")
    # The refusal's cue reached the other page too (its stream): it says nothing of it.
    other.wait_for_function("window.cues.some((c) => c.cue === 'error')")
    expect(other.locator("#message")).not_to_be_visible()
    assert refusal not in other.locator("body").inner_text()
    expect(banner).to_have_count(0, timeout=5_000)  # the scoreboard clears it after a moment
    expect(mine.locator("#message.bad.show")).to_have_count(1)  # the device that caused it keeps it
    for page in (mine, other, board):
        page.close()


# Deuteranopia (no green cones), Machado, Oliveira and Fernandes 2009 at full severity: a matrix on
# linear RGB, which is what an SVG filter works in by default.
DEUTERANOPIA = " ".join(
    [
        "0.367322 0.860646 -0.227968 0 0",
        "0.280085 0.672501 0.047413 0 0",
        "-0.011820 0.042940 0.968881 0 0",
        "0 0 0 1 0",
    ]
)
SIMULATE = f"""() => {{
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("style", "position: absolute; width: 0; height: 0");
  svg.innerHTML = '<filter id="deuteranopia"><feColorMatrix type="matrix" values="{DEUTERANOPIA}"/></filter>';
  document.body.append(svg);
  document.documentElement.style.filter = "url(#deuteranopia)";
}}"""
# A screenshot's pixels as [r, g, b] lists, read back through a canvas (no image library needed).
PIXELS = """async (url) => {
  const image = new Image(); image.src = url; await image.decode();
  const canvas = document.createElement("canvas"); canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext("2d"); context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, image.width, image.height).data;
  const pixels = [];
  for (let i = 0; i < data.length; i += 4) pixels.push([data[i], data[i + 1], data[i + 2]]);
  return {width: image.width, pixels};
}"""


def pixels(page: Page, selector: str, corner: bool = False) -> list[list[list[int]]]:
    """The element's pixels as the screen shows them, row by row (`corner`: its top left quarter)."""
    shot = page.locator(selector).screenshot(animations="disabled")
    read: dict[str, Any] = page.evaluate(PIXELS, "data:image/png;base64," + base64.b64encode(shot).decode())
    width, found = read["width"], read["pixels"]
    rows = [found[start : start + width] for start in range(0, len(found), width)]
    return [row[: width // 2] for row in rows[: len(rows) // 2]] if corner else rows


def light(rows: list[list[list[int]]]) -> set[tuple[int, int]]:
    """Where the picture is light (a symbol on its coloured ground): the points (x, y)."""
    return {(x, y) for y, row in enumerate(rows) for x, rgb in enumerate(row) if luminance(rgb) > 160}


def luminance(rgb: list[int]) -> float:
    return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]


def commonest(found: list[list[int]]) -> tuple[int, ...]:
    """The colour most of the pixels have (a header's band)."""
    counts: dict[tuple[int, ...], int] = {}
    for rgb in found:
        counts[tuple(rgb)] = counts.get(tuple(rgb), 0) + 1
    return max(counts, key=lambda colour: counts[colour])


def test_colours_are_told_apart_under_a_deuteranopia_simulation(browser: Browser, server: Server) -> None:
    """The page seen as without green cones (an SVG colour matrix over it): SPY's green and red bands
    come out nearly alike, so do purple and blue; each colour's mark still has its own shape on the
    screen, and Spy Team's red and blue cards their own corner symbols."""
    colours = ("green", "red", "purple", "blue")
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob", "Cy", "Dee"]})
    for colour in colours:
        server.call("POST", "/api/taps", {"card": f"spy/{colour}-spy"})
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server.url + "/")
    expect(page.locator(".spy .player header .colour-mark")).to_have_count(4)
    seen_before = {
        c: commonest([rgb for row in pixels(page, f".spy .player.{c} header") for rgb in row])
        for c in colours
    }
    page.evaluate(SIMULATE)
    page.evaluate(PAINTED)
    band = {
        c: commonest([rgb for row in pixels(page, f".spy .player.{c} header") for rgb in row])
        for c in colours
    }
    assert band["green"] != seen_before["green"] and band["red"] != seen_before["red"]  # the filter works
    # Each mark: where it is light (the shape), after the simulation.
    shape = {}
    for c in colours:
        mark = page.locator(f".spy .player.{c} header .colour-mark")
        shape[c] = (mark.inner_text(), light(pixels(page, f".spy .player.{c} header .colour-mark")))
    for one, other in itertools.combinations(colours, 2):
        (text_a, mask_a), (text_b, mask_b) = shape[one], shape[other]
        assert text_a != text_b, (one, other)
        # The shapes look different (one symbol drawn twice agrees at about 0.97, ■ and ● at 0.74).
        assert similarity(mask_a, mask_b) < 0.9, (one, other)

    # Spy Team: a red card and a blue card, told apart by the symbol in their corner.
    server.call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
    server.call("POST", "/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    server.call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
    server.call("POST", "/api/taps", {"card": "spy-team/red-9"})
    server.call("POST", "/api/taps", {"card": "spy-team/blue-9"})
    expect(page.locator(".spy-team .card.blue.played")).to_have_count(1)
    wait_settled(page)  # the played card's drop has ended
    corners = [light(pixels(page, f".spy-team .card.{team}.played", corner=True)) for team in ("red", "blue")]
    assert similarity(*corners) < 0.9
    page.close()


def similarity(one: set[tuple[int, int]], other: set[tuple[int, int]]) -> float:
    """How much two shapes agree: the light they share over all their light."""
    return len(one & other) / max(1, len(one | other))
