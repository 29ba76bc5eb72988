"""The server is the one source of each game's presentation: titles, new-game options and the cue
catalogue come from GET /api/games, and the pages load a game's renderer by name. A toy game kept
only in tests/packs/ is played through the control page and the scoreboard to prove that a game
needs nothing outside its own files."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from companion.core.cues import CUE_NAMES, CUE_STYLES
from companion.core.resources import web_dir
from companion.games import build_engines
from companion.games.catalog import DataError, load_catalog
from companion.games.packs import ENV, load_packs, playable_games
from tests.servers import TOKEN, Server, running_companion

TOY = Path(__file__).parents[1] / "packs" / "toy"
WEB = web_dir()
PLAYERS = {
    2: ["Ann", "Bob"],
    3: ["Ann", "Bob", "Cid"],
    4: ["Ann", "Bob", "Cid", "Dee"],
    5: ["Ann", "Bob", "Cid", "Dee", "Eve"],
}


def test_every_cue_has_its_presentation(client: Any) -> None:
    data = client.get("/api/games").get_json()
    assert set(CUE_STYLES) == set(CUE_NAMES)
    served = {cue["cue"]: cue for cue in data["cues"]}
    assert set(served) == set(CUE_NAMES)
    assert served["game-won"]["banner"] and served["game-won"]["kicker"] == "★ Game won ★"
    assert served["error"]["role"] == "refusal" and served["error"]["sound"]
    assert served["boom"]["pins"]["tune"] and served["boom"]["pins"]["light"]
    assert not served["your-turn"]["banner"]  # the seat LED says it; the scoreboard shows the prompt


def test_each_game_says_its_title_options_and_renderer(client: Any) -> None:
    games = {g["game"]: g for g in client.get("/api/games").get_json()["games"]}
    assert games["peanuts"]["short_title"] == "Mission for Peanuts"
    assert games["spy-team"]["renderer"] == {
        "js": "/static/js/games/spy-team.js",
        "css": "/static/css/games/spy-team.css",
    }
    for game in games.values():
        for asset in filter(None, game["renderer"].values()):
            assert client.get(asset).status_code == 200
    assert [o["name"] for o in games["peanuts"]["options"]] == ["start", "target"]
    assert games["peanuts"]["options"][1]["default"] == {"3": 3, "4": 2, "5": 2}


@pytest.mark.parametrize("game", sorted(load_catalog()))
def test_the_served_defaults_are_the_engines_own(game: str) -> None:
    """The form shows each option's default: starting with them must be starting with nothing."""
    engine = build_engines(load_catalog())[game]
    assert engine.options, "every game has a start player at least"
    for count in engine.players:
        players = PLAYERS[count]
        defaults = engine.option_defaults(count)
        assert set(defaults) <= {option.name for option in engine.options}
        assert engine.public_view(engine.setup(players, defaults)) == engine.public_view(
            engine.setup(players, {})
        )


def test_a_pack_adds_a_game_and_is_refused_when_broken(tmp_path: Path) -> None:
    engines, packs = playable_games({ENV: str(TOY)})
    assert "toy-race" in engines and {"spy", "spy-team", "peanuts"} <= set(engines)
    assert packs["toy-race"].asset(".js") == TOY / "toy-race.js"
    (tmp_path / "toy-race.toml").write_text((TOY / "toy-race.toml").read_text())
    with pytest.raises(DataError, match="engine of pack game 'toy-race' is missing"):
        load_packs({ENV: str(tmp_path)})
    (tmp_path / "toy-race.py").write_text("x = 1\n")
    with pytest.raises(DataError, match="no Engine subclass"):
        load_packs({ENV: str(tmp_path)})
    clash = tmp_path / "clash"
    clash.mkdir()
    (clash / "spy.toml").write_text((TOY / "toy-race.toml").read_text().replace("toy-race", "spy"))
    (clash / "spy.py").write_text((TOY / "toy-race.py").read_text().replace('"toy-race"', '"spy"'))
    with pytest.raises(DataError, match="name of a shipped game"):
        playable_games({ENV: str(clash)})
    with pytest.raises(DataError, match="is not a folder"):
        load_packs({ENV: str(tmp_path / "nowhere")})


def js_strings(path: Path) -> set[str]:
    """The string literals of a script (quotes and backticks; template parts between ${...})."""
    text = re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M)
    text = re.sub(r"(\$|getElementById)\(\"[^\"]*\"\)", "", text)  # element ids are the page's own
    found = set()
    for match in re.finditer(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`((?:[^`\\]|\\.)*)`', text):
        literal = next(group for group in match.groups() if group is not None)
        found.update(re.split(r"\$\{[^}]*\}", literal))
    return found


def test_the_pages_keep_no_list_of_games_or_cues() -> None:
    """Only a game's own renderer names its game; no page or shared script names a game or a cue, so
    nothing there can drift from what the server serves."""
    games = set(load_catalog())
    names = games | set(CUE_NAMES)
    shared = sorted((WEB / "js").glob("*.js"))
    assert shared, "no scripts found"
    for script in shared:
        assert not js_strings(script) & names, f"{script.name} names a game or a cue"
    for page in WEB.glob("*.html"):
        text = page.read_text()
        assert not [g for g in games if re.search(rf"\b{re.escape(g)}\b[^-]", text)], (
            f"{page.name} names a game"
        )
        assert "/games/" not in text, f"{page.name} loads a game's renderer by itself"
    for script in (WEB / "js" / "games").glob("*.js"):  # each renderer is its own game's, by file name
        assert re.findall(r"registerGame\(\"([^\"]+)\"", script.read_text()) == [script.stem]
        assert "view.game ===" not in script.read_text()
    shared_css = (WEB / "css" / "app.css").read_text()
    assert not re.search(r"\.spy-team|\.peanuts|\.spy\b|data-game=\"[a-z]", shared_css)


@pytest.fixture
def toy_server(tmp_path: Path) -> Iterator[Server]:
    with running_companion(tmp_path / "journal.db", env={ENV: str(TOY)}) as running:
        yield running


def test_a_toy_game_from_a_pack_plays_through_both_pages(browser: Browser, toy_server: Server) -> None:
    errors: list[str] = []
    board = browser.new_page(viewport={"width": 1280, "height": 800})
    control = browser.new_page(viewport={"width": 390, "height": 844})
    for page in (board, control):
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
    board.goto(toy_server.url + "/")
    control.goto(f"{toy_server.url}/control#token={TOKEN}")
    # The form is the pack's: its title and player count, its options with their defaults.
    expect(control.locator("#game option[value=toy-race]")).to_have_text("Toy Race (2\u20133 players)")
    control.select_option("#game", "toy-race")
    expect(control.locator('[data-option="target"]')).to_have_value("5")
    control.fill('[data-option="target"]', "4")
    control.fill("#players", "Ann, Bob")
    control.select_option('[data-option="start"]', label="Bob")
    control.click("#start-form button[type=submit]")
    expect(control.locator("#message")).to_have_text("Game started.")
    # Both pages loaded the pack's renderer and style by name.
    expect(board.locator("#title")).to_have_text("Toy Race")
    expect(board.locator('.toy-race .lane[data-seat="1"] .progress')).to_have_text("0 / 4")
    expect(board.locator("#prompt")).to_have_text("Bob: tap a card")
    assert board.locator(".toy-race .lane").first.evaluate("n => getComputedStyle(n).display") == "flex"
    expect(control.locator("#board .toy-race .lane")).to_have_count(2)
    # The pack's action and its cards on the virtual mat.
    control.get_by_role("button", name="Skip Bob's turn").click()
    expect(board.locator("#prompt")).to_have_text("Ann: tap a card")
    control.click('#mat button[data-card="toy-race/three"]')
    expect(board.locator('.toy-race .lane[data-seat="0"] .progress')).to_have_text("3 / 4")
    control.click('#mat button[data-card="toy-race/two"]')
    control.click('#mat button[data-card="toy-race/one"]')
    expect(board.locator(".toy-race .lane.winner .name")).to_have_text("Ann")
    # The table-wide cue's banner, from the served catalogue.
    expect(board.locator("#banner")).to_contain_text("Ann wins the race")
    expect(board.locator("#banner")).to_have_attribute("data-kicker", "★ Game won ★")
    expect(board.locator("#round")).to_have_text("Game over")
    state = toy_server.call("GET", "/api/state")
    assert state["winners"] == [0] and state["target"] == 4
    assert json.dumps(errors) == "[]"
    board.close()
    control.close()


def test_a_pack_game_s_page_keeps_its_renderer_in_its_place(browser: Browser, toy_server: Server) -> None:
    """The scoreboard's files are sent as one script and one sheet, except when the game's renderer
    is a pack's (/packs/): then every file keeps its own tag, so the renderer still runs after
    common.js and before scoreboard.js, and its sheet comes after the page's."""
    toy_server.call("POST", "/api/games", {"game": "toy-race", "players": ["Ann", "Bob"]})
    with urllib.request.urlopen(toy_server.url + "/") as response:
        head = response.read().decode("utf-8").split("</head>")[0]
    scripts = [re.sub(r"\?v=\w+$", "", src) for src in re.findall(r'<script defer[^>]* src="([^"]+)"', head)]
    assert scripts == [
        "/static/js/common.js",
        "/static/js/sounds.js",
        "/packs/toy-race.js",
        "/static/js/scoreboard.js",
    ]
    sheets = [
        re.sub(r"\?v=\w+$", "", href) for href in re.findall(r'<link rel="stylesheet" href="([^"]+)"', head)
    ]
    assert sheets == ["/static/css/app.css", "/static/css/results.css", "/packs/toy-race.css"]
    errors: list[str] = []
    board = browser.new_page(viewport={"width": 1280, "height": 800})
    board.on("pageerror", lambda error: errors.append(str(error)))
    board.goto(toy_server.url + "/")
    expect(board.locator('.toy-race .lane[data-seat="1"] .progress')).to_have_text("0 / 5")
    assert errors == []
    board.close()
