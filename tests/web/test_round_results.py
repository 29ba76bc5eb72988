"""Issue 24: each round's result at a glance, and a story that opens at its newest line.

For each game, on a 10" tablet (1280x800) and a phone (390x844), played through the HTTP API
(tests/scripted_games.py): right after a round the board itself names each player's part of it
(Spy Team: tricks against target; Peanuts: the winner, how, each hand shown; SPY: who is out and
why) without a click; after the next input it is one tap away ("Last round"); the story opens at
its newest line, follows the new ones unless the reader scrolled up, and lies over the board
without moving it; and /history shows the same results for the past games."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.scripted_games import GAMES
from tests.servers import Server, running_companion

SIZES = {"tablet": (1280, 800), "phone": (390, 844)}
# The state right after a round in each scripted game (SPY is one long round: a player just out).
AFTER_ROUND = {"spy-team": "round-over", "peanuts": "round-over", "spy": "out"}

# The newest line of the story, in view: inside the list's visible box and inside the window.
NEWEST_IN_VIEW = """(text) => {
  const list = document.querySelector('#story ol');
  const last = list && list.lastElementChild;
  if (!document.querySelector('#story').open || !last || last.textContent !== text) return false;
  const box = list.getBoundingClientRect(), line = last.getBoundingClientRect();
  const inList = line.top >= box.top - 1 && line.bottom <= box.bottom + 1;
  return inList && line.bottom <= innerHeight && box.height > 0;
}"""
# A promise of the `toggle` event that opens the story, handled by then (the page's own handler came
# first); a closing one still on its way is not it.
TOGGLED = """() => {
  const story = document.querySelector('#story');
  window.storyToggled = new Promise((done) => story.addEventListener('toggle', function opened() {
    if (story.open) { story.removeEventListener('toggle', opened); done(true); }
  }));
}"""
BOARD_BOX = """(() => {
  const r = document.querySelector('#board').getBoundingClientRect();
  return [r.left, r.top, r.width, r.height];
})()"""
# Whether the board can still be seen with the story open: the point a quarter into it from its top
# left shows the board, not the panel.
BOARD_SEEN = """(() => {
  const r = document.querySelector('#board').getBoundingClientRect();
  const seen = Math.min(r.height, innerHeight - r.top);
  const hit = document.elementFromPoint(r.left + r.width / 4, r.top + seen / 4);
  return Boolean(hit && hit.closest('#board'));
})()"""


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_companion(tmp_path_factory.mktemp("results") / "journal.db") as running:
        yield running


def pages_for(browser: Browser, table: Server, errors: list[str]) -> dict[str, Page]:
    pages = {}
    for name, (width, height) in SIZES.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(table.url + "/")
        page.add_style_tag(content="#banner { display: none !important; }")  # banners come and go
        pages[name] = page
    return pages


def advance(script: Iterator[str], to: str) -> None:
    """Play the scripted game on until its state `to`."""
    for state in script:
        if state == to:
            return
    raise AssertionError(f"the script never reached {to!r}")


def spy_team_figures(page: Page, view: dict[str, Any]) -> None:
    last = view["rounds"][-1]
    for player in view["players"]:
        seat = page.locator(f"#board .seat[data-seat='{player['seat']}']")
        won, target = last["tricks_won"][player["seat"]], last["targets"][player["seat"]]
        expect(seat.locator(".tricks")).to_have_text(f"{won} / {target}")
        expect(seat.locator(".round-of")).to_have_text(f" · Round {last['round']}")
    flash = page.locator("#board .centre .round-flash")
    rival = next(t for t in view["teams"] if t["name"] != last["team"])
    expect(flash).to_contain_text(f"{rival['name']}'s mission")  # which mission was sabotaged...
    expect(flash).to_contain_text("sabotaged")
    expect(flash).to_contain_text(f"{last['team']} remove {last['tile']}")  # ...and which completed


def peanuts_part(last: dict[str, Any], seat: int) -> list[str]:
    """What the board must say of `seat`'s part in the round `last`."""
    if seat in last["winners"]:
        part = ["+1 point"]
    elif seat in last["out"]:
        part = ["out"]
    else:
        part = ["no point"]
    for shown in last.get("hands", []):
        if shown["seat"] == seat:
            part += [shown["combination"] or "no combination", f"{shown['notches']} notches"]
    return part


def peanuts_figures(page: Page, view: dict[str, Any]) -> None:
    last = view["rounds"][-1]
    assert last["how"] == "showdown" and last["hands"]  # the seeded game's first round
    winner = view["players"][last["winners"][0]]["name"]
    expect(page.locator("#board .news .big")).to_have_text(f"{winner} won round {last['round']}")
    expect(page.locator("#board .news .why").first).to_contain_text(last["reason"])  # how: the combination
    for player in view["players"]:
        line = page.locator(f"#board .player[data-seat='{player['seat']}'] .round-line")
        for text in peanuts_part(last, player["seat"]):
            expect(line).to_contain_text(text)


def spy_figures(page: Page, view: dict[str, Any]) -> None:
    out = view["last_out"]
    assert out is not None and out["reason"].startswith("BOOM")
    news = page.locator("#board .headline .out-news")
    expect(news).to_contain_text(f"{out['name']} is out")
    expect(news).to_contain_text(out["reason"])
    expect(page.locator(f"#board .player[data-seat='{out['seat']}'] .out-why")).to_contain_text(out["reason"])


FIGURES: dict[str, Callable[[Page, dict[str, Any]], None]] = {
    "spy-team": spy_team_figures,
    "peanuts": peanuts_figures,
    "spy": spy_figures,
}


def open_story(page: Page, view: dict[str, Any]) -> None:
    """Open the story: its newest line in view, the board where it was and still seen."""
    before = page.evaluate(BOARD_BOX)
    page.evaluate(TOGGLED)
    page.click("#story summary")
    page.evaluate("window.storyToggled")  # placed beside the board and scrolled by its handler
    page.wait_for_function(NEWEST_IN_VIEW, arg=view["log"][-1], timeout=5000)
    assert page.evaluate(BOARD_BOX) == before  # nothing pushed the board
    assert page.evaluate(BOARD_SEEN)
    expect(page.locator("#board .seat").first).to_be_visible()


def last_round(page: Page, view: dict[str, Any]) -> None:
    """After the next input the result is one tap away: "Last round" (SPY: "Who is out")."""
    button = page.locator("#last-round-button")
    expect(button).to_be_visible()
    button.click()
    card = page.locator("#last-round .round-card")
    expect(card).to_be_visible()
    for player in view["players"]:
        name = re.compile(f"^{re.escape(player['name'])}$")
        expect(card.locator(".rc-name", has_text=name)).to_have_count(1)
    if view["game"] == "spy-team":
        last = view["rounds"][-1]
        for seat, row in enumerate(card.locator(".rc-fig").all()):
            expect(row).to_have_text(f"{last['tricks_won'][seat]} / {last['targets'][seat]}")
    card.click()  # a tap closes it
    expect(card).to_be_hidden()


@pytest.mark.parametrize("game", list(GAMES))
def test_right_after_a_round_the_board_names_each_players_part_and_the_story_opens_at_its_end(
    browser: Browser, table: Server, game: str
) -> None:
    errors: list[str] = []
    pages = pages_for(browser, table, errors)
    script = GAMES[game](table.call)
    advance(script, AFTER_ROUND[game])
    view = table.call("GET", "/api/state", None)
    for page in pages.values():
        page.bring_to_front()  # a page in the background draws no frames
        FIGURES[game](page, view)  # no click: the board itself
        open_story(page, view)

    # The next input (the first of the next round, or of the next turn): the story, still open,
    # follows its new lines; the round's result is gone from the board and one tap away.
    advance(script, "playing")
    view = table.call("GET", "/api/state", None)
    for page in pages.values():
        page.bring_to_front()
        page.wait_for_function(NEWEST_IN_VIEW, arg=view["log"][-1], timeout=5000)
        page.click("#story summary")  # closed: the board alone
        if game == "spy-team":
            expect(page.locator("#board .round-of")).to_have_count(0)
        last_round(page, view)

    # A reader who scrolled up stays where they read while the game goes on.
    for page in pages.values():
        page.bring_to_front()
        # Opening scrolls to the newest line in the story's `toggle` handler, a task after the click:
        # scroll up only once that event was handled, or its scroll lands after ours.
        page.evaluate(TOGGLED)
        page.click("#story summary")
        page.evaluate("window.storyToggled")
        page.wait_for_function(NEWEST_IN_VIEW, arg=view["log"][-1], timeout=5000)
        page.evaluate("document.querySelector('#story ol').scrollTop = 0")
    advance(script, "game-over")
    view = table.call("GET", "/api/state", None)
    for page in pages.values():
        page.bring_to_front()
        expect(page.locator("#story ol li").last).to_have_text(view["log"][-1])
        assert page.evaluate("document.querySelector('#story ol').scrollTop") == 0
        page.close()
    assert errors == []


def test_the_history_shows_each_round_result_of_past_games(browser: Browser, table: Server) -> None:
    history = table.call("GET", "/api/history", None)
    assert {record["game"] for record in history["games"]} == set(GAMES)  # the games played above
    page = browser.new_page(viewport={"width": 390, "height": 844})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(table.url + "/history")
    for record in history["games"]:
        board = record["board"]
        details = page.locator(f'details.game[id="game-{record["id"]}"]')
        details.locator("summary").click()
        cards = details.locator(".results .round-card")
        if record["game"] == "spy":
            expect(cards).to_have_count(1)
            for player in board["players"]:
                if player["eliminated"]:
                    expect(cards).to_contain_text(f"{player['name']}OUT{player['out_reason']}")
            continue
        expect(cards).to_have_count(len(board["rounds"]))
        for card, result in zip(cards.all(), board["rounds"], strict=True):
            expect(card).to_contain_text(f"Round {result['round']}")
            if record["game"] == "spy-team":
                for seat, figure in enumerate(card.locator(".rc-fig").all()):
                    expect(figure).to_have_text(f"{result['tricks_won'][seat]} / {result['targets'][seat]}")
            else:
                for player in board["players"]:
                    row = card.locator(".rc-row").nth(player["seat"])
                    for text in peanuts_part(result, player["seat"]):
                        expect(row).to_contain_text(text)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()
    assert errors == []
