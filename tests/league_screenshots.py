"""Screenshots of the league page with ratings: `.venv/bin/python -m tests.league_screenshots` serves
the league of the recorded night (tests/mqtt/league_night.json, two tables on line) from a
throw-away store and photographs the whole page on a phone (390x844) and a 10" tablet or laptop
(1280x800) into docs/screens/ (or the folder given)."""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright
from waitress.server import create_server

from companion.games.catalog import load_catalog
from companion.mqtt.league import LeagueStore, create_league_app
from tests.conftest import CHROMIUM, CHROMIUM_ARGS

DEVICES = {"phone": (390, 844), "desktop": (1280, 800)}
NIGHT = Path(__file__).parent / "mqtt" / "league_night.json"


def main(folder: Path) -> None:
    if CHROMIUM is None:
        sys.exit("league screenshots: Chromium is needed (scripts/test installs it)")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work, sync_playwright() as playwright:
        store = LeagueStore(Path(work) / "league.db")
        for message in json.loads(NIGHT.read_text())["messages"]:
            store.record(message["payload"])
        playing = {"game": "spy", "status": "playing", "round": 1}
        players = [{"name": "Ann", "score": 0}, {"name": "Bob", "score": 0}]
        store.table("left", status="online", state={**playing, "players": players})
        store.table("right", status="online", state={"game": None})
        titles = {game: data.title for game, data in load_catalog().items()}
        server = create_server(create_league_app(store, titles), host="127.0.0.1", port=0)
        threading.Thread(target=server.run, daemon=True).start()
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for device, (width, height) in DEVICES.items():
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(f"http://127.0.0.1:{server.effective_port}/")
            page.wait_for_selector("#overall tbody tr")
            path = folder / f"league-ratings-{device}.png"
            page.screenshot(path=str(path), full_page=True)
            print(path)
        browser.close()
        server.close()
        store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screens"))
