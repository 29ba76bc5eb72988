"""The history page: past games from the journal with their story, statistics per player, exports.
Open to read (no token), public facts only."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, expect

from companion.games import build_engines
from companion.games.base import GameError
from companion.games.catalog import load_catalog
from companion.table.journal import Journal
from companion.webapp.history import game_records
from tests.conftest import AUTH
from tests.games import test_peanuts
from tests.games.test_spy import ENGINE as SPY
from tests.games.test_spy import _assert_names_only, _revealed, scripted_game
from tests.servers import Server
from tests.spy_team_play import trick_cards

ENGINES = build_engines(load_catalog())


def play_spy(post: Any, players: list[str]) -> None:
    """The SPY test's scripted game (Ann wins), through the API; its refusals are refused here too."""
    post("/api/games", {"game": "spy", "players": players})
    for event in scripted_game():
        if event["type"] == "tap":
            post("/api/taps", {k: v for k, v in event.items() if k != "type"}, refusable=True)
        else:
            post("/api/actions", event, refusable=True)


def final_spy_state(players: list[str]) -> Any:
    state = SPY.setup(players, {})
    for event in scripted_game():
        with contextlib.suppress(GameError):
            state, _ = SPY.apply(state, event)
    return state


def client_post(client: Any) -> Any:
    def post(path: str, body: Any, refusable: bool = False) -> Any:
        response = client.post(path, json=body, headers=AUTH)
        assert response.status_code in ((200, 201, 409) if refusable else (200, 201)), response.get_json()
        return response.get_json()

    return post


def test_history_lists_past_games_with_their_story_and_statistics(client: Any) -> None:
    post = client_post(client)
    play_spy(post, ["Ann", "Bob", "Cy", "Di"])
    play_spy(post, ["bob", "Ann", "Eve", "Di"])  # "bob" is Bob: names match whatever their case
    post("/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"], "options": {"start": 0}})
    post("/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    post("/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
    for card in trick_cards(client.get("/api/state").get_json(), winner=1):
        post("/api/taps", {"card": card})
    assert client.get("/api/history").get_json()["games"][0]["log"][-1] == "Trick 1: Bob won it with Red 24."
    post("/api/undo", None)  # taken back: not part of the story (nor kept from the read before)

    response = client.get("/api/history")  # open to read: no token
    assert response.status_code == 200
    history = response.get_json()
    games = history["games"]
    assert [g["game"] for g in games] == ["spy-team", "spy", "spy"]  # newest first
    team, second, first = games
    assert team["status"] == "playing" and team["winners"] == [] and team["rounds"] == 0
    assert team["log"][-1] == "Cid played Blue 1." and len(team["log"]) == 2 + 3
    assert first["title"] == "SPY" and first["status"] == "game-over" and first["winners"] == ["Ann"]
    assert [p["name"] for p in first["players"]] == ["Ann", "Bob", "Cy", "Di"]
    assert first["log"] == SPY.public_view(final_spy_state(["Ann", "Bob", "Cy", "Di"]))["log"]
    assert first["summary"] == ["Ann won: the last spy standing."]
    assert second["winners"] == ["bob"] and first["started_at"] < second["started_at"]
    # Finished games only, players known by name: Ann played 2 and won 1, like bob (Bob); the
    # unfinished Spy Team game counts for nobody.
    stats = {p["player"].casefold(): p for p in history["players"]}
    assert stats["ann"] == {"player": "Ann", "played": 2, "won": 1, "games": {"spy": {"played": 2, "won": 1}}}
    assert stats["bob"]["played"] == 2 and stats["bob"]["won"] == 1
    assert stats["eve"] == {"player": "Eve", "played": 1, "won": 0, "games": {"spy": {"played": 1, "won": 0}}}
    assert "cid" not in stats
    # Public facts only: the SPY games name no card that was not face up at their end.
    state = final_spy_state(["Ann", "Bob", "Cy", "Di"])
    _assert_names_only([first, second], _revealed(state))

    games_csv = list(csv.DictReader(io.StringIO(client.get("/api/history.csv").get_data(as_text=True))))
    assert [row["game"] for row in games_csv] == ["Spy Team", "SPY", "SPY"]
    assert games_csv[2]["players"] == "Ann; Bob; Cy; Di" and games_csv[2]["winners"] == "Ann"
    assert games_csv[0]["status"] == "playing" and games_csv[2]["rounds"] == "0"
    response = client.get("/api/history/players.csv")
    assert response.mimetype == "text/csv" and "attachment" in response.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0] == ["player", "game", "played", "won"]
    assert ["Ann", "all", "2", "1"] in rows and ["Ann", "spy", "2", "1"] in rows


def test_a_name_like_a_formula_is_text_in_the_csv(client: Any) -> None:
    post = client_post(client)
    post("/api/games", {"game": "spy", "players": ["=1+2", "Bob"]})
    text = client.get("/api/history.csv").get_data(as_text=True)
    assert "'=1+2; Bob" in text


def get(server: Server, path: str) -> bytes:
    with urllib.request.urlopen(server.url + path, timeout=10) as response:  # no token
        return bytes(response.read())


def test_the_history_page_reads_on_a_phone_and_a_tablet(browser: Browser, server: Server) -> None:
    def post(path: str, body: Any, refusable: bool = False) -> None:
        try:
            server.call("POST", path, body)
        except urllib.error.HTTPError as error:
            assert refusable and error.code == 409

    play_spy(post, ["Annabel-Louise", "Bartholomew", "Cy", "Di"])
    history = json.loads(get(server, "/api/history"))
    assert history["games"][0]["winners"] == ["Annabel-Louise"]
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    for width, height in ((360, 740), (800, 1280), (1280, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(server.url + "/history")
        game = page.locator("details.game").first
        expect(game.locator("summary")).to_contain_text("SPY")
        expect(game.locator("summary")).to_contain_text("Annabel-Louise won")
        game.locator("summary").click()
        expect(game.locator(".log li").first).to_have_text("Annabel-Louise plays green.")
        expect(game.locator(".log li")).to_have_count(23)
        expect(page.locator("table.players tbody tr").first).to_contain_text("Annabel-Louise")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        font = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.log li')).fontSize)")
        assert font >= 16
    assert errors == []


def test_a_peanuts_game_in_the_history_tells_only_its_public_story(tmp_path: Path) -> None:
    """A simulated game (tests/games/test_peanuts.py: real cards moved in step) journaled input by input:
    its history is its final public view's log and summary, and names no card by id."""
    played = test_peanuts.Table(3, 1003)
    played.play()
    journal = Journal(tmp_path / "journal.db")
    start = {"type": "start", "game": "peanuts", "players": test_peanuts.NAMES[:3]}
    journal.append({**start, "options": {"start": played.log[0].before.start}}, "2026-11-30T20:00:00+00:00")
    for accepted in (i for i in played.log if i.after is not None):
        journal.append(accepted.event, "2026-11-30T20:05:00+00:00")
    (record,) = game_records(journal, ENGINES, {})
    view = test_peanuts.ENGINE.public_view(played.state)
    assert record["status"] == "game-over" and record["rounds"] == len(view["rounds"])
    assert record["log"] == view["log"] and record["summary"] == view["summary"]
    assert record["winners"] == [view["players"][seat]["name"] for seat in view["winners"]]
    assert "peanuts/" not in json.dumps(record)
