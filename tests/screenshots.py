"""Screenshots of each game for the README: `scripts/screens` runs a companion on a throw-away
journal, plays the scripted games of tests/scripted_games.py through its API, and photographs the
scoreboard on a 10" tablet (1280x800) and on a phone (390x844) into docs/screens/."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.scripted_games import GAMES
from tests.servers import running_companion
from tests.waiting import WATCH_STREAM, wait_drawn

DEVICES = {"tablet": (1280, 800), "phone": (390, 844)}
HIDE_BANNERS = "#banner { display: none !important; }"  # a picture of the board, not of a moment


def main(folder: Path) -> None:
    if CHROMIUM is None:
        sys.exit("screens: Chromium is needed (scripts/test installs it)")
    folder.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as work,
        running_companion(Path(work) / "journal.db") as table,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pages = {}
        for device, (width, height) in DEVICES.items():
            page = browser.new_page(viewport={"width": width, "height": height})
            page.add_init_script(WATCH_STREAM)
            page.goto(table.url + "/")
            page.add_style_tag(content=HIDE_BANNERS)
            pages[device] = page
        for game, script in GAMES.items():
            for state in script(table.call):
                view = table.call("GET", "/api/state")
                for device, page in pages.items():
                    wait_drawn(page, view)  # this very state, its animations over
                    path = folder / f"{game}-{state}-{device}.png"
                    page.screenshot(path=str(path))
                    print(path)
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/screens"))
