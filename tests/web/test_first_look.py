"""Issue 22: the scoreboard arrives with what it needs to draw the table's state (its first look:
the view, the current game's presentation, the cues, its renderer preloaded), so the board needs no
chain of fetches; /api/games/<game> serves one game, cached by version. The inlined view is the
public view the event stream sends, nothing more."""

from __future__ import annotations

import gzip
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Route, expect

from companion.webapp.static import inline_json
from tests.conftest import AUTH, open_event_stream
from tests.servers import Server
from tests.web.test_peanuts_api import FACE_DOWN, face_down_round, send, start

PLAYERS = ["Ann", "Bob", "Cid", "Dee"]


class Scripts(HTMLParser):
    """The page's <script> elements as the HTML parser sees them: (attributes, text)."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._open = dict(attrs)
            self.scripts.append((self._open, ""))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._open = None


def scripts_of(page: str) -> list[tuple[dict[str, str | None], str]]:
    parser = Scripts()
    parser.feed(page)
    return parser.scripts


def first_look(client: Any, path: str = "/") -> dict[str, Any]:
    page = client.get(path).get_data(as_text=True)
    found = [text for attrs, text in scripts_of(page) if attrs.get("id") == "first-look"]
    assert len(found) == 1, page
    data: dict[str, Any] = json.loads(found[0])
    return data


def test_the_scoreboard_arrives_with_the_view_its_game_and_the_cues(client: Any) -> None:
    client.post("/api/games", json={"game": "spy-team", "players": PLAYERS}, headers=AUTH)
    data = first_look(client)
    assert data["view"] == client.get("/api/state").get_json()
    catalogue = client.get("/api/games").get_json()
    # One game, as /api/games has it; the cues without the pins' patterns (the buzzer tunes).
    assert data["games"] == [game for game in catalogue["games"] if game["game"] == "spy-team"]
    assert data["cues"] == [{k: v for k, v in cue.items() if k != "pins"} for cue in catalogue["cues"]]
    assert set(data["versions"]) == {game["game"] for game in catalogue["games"]}


WEB = Path(__file__).parents[2] / "web"


def bundled(client: Any, head: str, tag: str) -> tuple[str, bytes]:
    """The one file of the head's `tag` elements (its URL without the version, and its body)."""
    urls = re.findall(tag, head)
    assert len(urls) == 1, urls
    response = client.get(urls[0], headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert response.headers["Content-Encoding"] == "gzip"
    return re.sub(r"\?v=[0-9a-f]{16}$", "", urls[0]), gzip.decompress(response.get_data())


def test_its_renderer_is_preloaded_in_order_and_the_old_page_is_one_flag_away(client: Any) -> None:
    client.post("/api/games", json={"game": "spy-team", "players": PLAYERS}, headers=AUTH)
    page = client.get("/").get_data(as_text=True)
    head = page.split("</head>")[0]
    assert all("defer" in attrs for attrs, _ in scripts_of(head) if "src" in attrs)
    # One script, the files one after another in the order they must run (the renderer after
    # common.js, before scoreboard.js), and one style sheet: a new page asks for two files, not seven.
    url, script = bundled(client, head, r'<script defer blocking="render" src="([^"]+)"></script>')
    files = ["common.js", "sounds.js", "games/spy-team.js", "scoreboard.js"]
    assert url.startswith("/static/bundles/") and url.endswith(".js")
    assert script == b"\n".join((WEB / "js" / name).read_bytes() for name in files)
    url, sheet = bundled(client, head, r'<link rel="stylesheet" href="([^"]+)">')
    files = ["app.css", "results.css", "games/spy-team.css"]
    assert url.startswith("/static/bundles/") and url.endswith(".css")
    assert sheet == b"\n".join((WEB / "css" / name).read_bytes() for name in files)
    plain = client.get("/?first-look=0").get_data(as_text=True)
    assert 'id="first-look"' not in plain and "games/spy-team" not in plain and "bundles/" not in plain
    assert "/static/js/common.js?v=" in plain


def test_a_page_of_another_game_has_its_own_bundles(client: Any) -> None:
    first = client.get("/").get_data(as_text=True).split("</head>")[0]
    client.post("/api/games", json={"game": "spy", "players": PLAYERS[:3]}, headers=AUTH)
    then = client.get("/").get_data(as_text=True).split("</head>")[0]
    _, idle = bundled(client, first, r'<script defer blocking="render" src="([^"]+)"></script>')
    _, spy = bundled(client, then, r'<script defer blocking="render" src="([^"]+)"></script>')
    assert b'registerGame("spy"' not in idle and b'registerGame("spy"' in spy
    assert spy.startswith(idle.split(b"\n", 1)[0])  # the compile hint stays the bundle's first line


def test_an_idle_table_inlines_no_game(client: Any) -> None:
    data = first_look(client)
    assert data["view"]["status"] == "idle" and data["games"] == []
    assert "/static/js/games/" not in client.get("/").get_data(as_text=True)


def test_no_string_can_break_out_of_the_inlined_json() -> None:
    nasty = [
        "</script><script>alert(1)</script>",
        "<!--",
        "<!-- <script>",
        "a & b > c",
        "\u2028\u2029",
        "\\<",
    ]
    text = inline_json({"names": nasty})
    assert not set(text) & set("<>&\u2028\u2029")
    assert json.loads(text) == {"names": nasty}


def test_a_player_named_like_markup_stays_text_in_the_page(client: Any) -> None:
    names = ["</script><b>Ann", "<!--<script>", "Cid & <i>", "Dee"]  # at most 24 characters
    response = client.post("/api/games", json={"game": "spy-team", "players": names}, headers=AUTH)
    assert response.status_code == 201, response.get_json()
    page = client.get("/").get_data(as_text=True)
    assert not any(name in page for name in names[:3])
    # The parser sees the page's own scripts and no other (its bundle, its first look), and the names
    # come back whole.
    assert len(scripts_of(page)) == 2
    assert [player["name"] for player in first_look(client)["view"]["players"]] == names


def test_the_inlined_view_is_the_streams_and_never_names_a_face_down_card(client: Any) -> None:
    start(client, ["Ann", "Bob", "Cy"])
    before = first_look(client)
    for step, status in face_down_round()[:18]:  # up to Cy's Informant 2 lying face down
        send(client, step, status)
    data = first_look(client)
    # The stream's view: the table's own, sent to every scoreboard.
    response, _, chunks = open_event_stream(client)
    response.close()
    data_line = next(line for line in chunks[-1].splitlines() if line.startswith("data:"))
    assert data["view"] == json.loads(data_line.removeprefix("data:"))
    assert all(card not in json.dumps(data["view"]) for card in FACE_DOWN)
    # Nothing of the game's state outside the view: the rest is the same whatever happened.
    assert {k: v for k, v in data.items() if k != "view"} == {k: v for k, v in before.items() if k != "view"}


def test_a_reload_of_the_same_state_is_a_304_and_a_new_state_a_new_page(client: Any) -> None:
    client.post("/api/games", json={"game": "spy-team", "players": PLAYERS}, headers=AUTH)
    first = client.get("/", headers={"Accept-Encoding": "gzip"})
    assert first.headers["Content-Encoding"] == "gzip" and first.headers["Cache-Control"] == "no-cache"
    again = client.get("/", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    client.post("/api/actions", json={"type": "mission", "seat": 0, "tile": "1/5", "target": 1}, headers=AUTH)
    moved = client.get("/", headers={"If-None-Match": first.headers["ETag"]})
    assert moved.status_code == 200 and moved.headers["ETag"] != first.headers["ETag"]


def test_one_game_is_served_alone_and_kept_for_good_at_its_version(client: Any) -> None:
    versions = first_look(client)["versions"]
    catalogue = {game["game"]: game for game in client.get("/api/games").get_json()["games"]}
    for game, version in versions.items():
        kept = client.get(f"/api/games/{game}?v={version}")
        assert kept.get_json() == catalogue[game]
        assert kept.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        unversioned = client.get(f"/api/games/{game}")
        assert unversioned.headers["Cache-Control"] == "no-cache"
        assert (
            client.get(
                f"/api/games/{game}", headers={"If-None-Match": unversioned.headers["ETag"]}
            ).status_code
            == 304
        )
        stale = client.get(f"/api/games/{game}?v=0123456789abcdef")
        assert stale.headers["Cache-Control"] == "no-cache"
    missing = client.get("/api/games/no-such-game")
    assert missing.status_code == 404 and "no-such-game" in missing.get_json()["error"]


def test_the_board_is_drawn_with_no_catalogue_and_no_stream(browser: Browser, server: Server) -> None:
    """Everything the first look replaces is refused: the board still shows the game."""
    server.call("POST", "/api/games", {"game": "spy-team", "players": PLAYERS})
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    asked: list[str] = []

    def refuse(route: Route) -> None:
        asked.append(route.request.url)
        route.abort()

    page.route(re.compile(r".*/api/(games|events).*"), refuse)
    page.goto(server.url + "/")
    expect(page.locator("#title")).to_have_text("Spy Team")
    expect(page.locator('.seat[data-seat="3"]')).to_contain_text("Dee")
    # Its renderer's sheet came in the page's one sheet, its script in the one script.
    assert page.locator("link[rel=stylesheet]").count() == 1
    assert page.locator("link[href*='/static/bundles/']").count() == 1
    rules = "[...document.styleSheets[0].cssRules].map((rule) => rule.selectorText || '')"
    assert any(selector.startswith(".spy-team ") for selector in page.evaluate(rules))
    assert not any("/api/games" in url for url in asked)  # the stream was tried, the catalogue never
    assert errors == []
    page.close()


def test_a_game_started_later_is_fetched_alone(browser: Browser, server: Server) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(10_000)
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(server.url + "/")
    expect(page.locator(".idle")).to_contain_text("No game yet")
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob", "Cid"]})
    expect(page.locator("#title")).to_have_text("SPY")
    catalogue = [url.removeprefix(server.url) for url in fetched if "/api/games" in url]
    assert len(catalogue) == 1 and re.fullmatch(r"/api/games/spy\?v=[0-9a-f]{16}", catalogue[0]), catalogue
    page.close()
