"""The control page's "Table Wi-Fi" panel in Debian's Chromium, on a phone (390x844) and a tablet
(1280x800): the Wi-Fi QR code, then the scoreboard's, read back from the screenshot by a real
decoder (zxing-cpp), escapes included; never on the scoreboard; no sideways scrolling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion.network.wifi import wifi_qr_text
from tests.nm_mock import MockNM
from tests.qr_decode import decode_image
from tests.servers import TOKEN, free_port, running_companion

SSID = 'Ann\'s "table"; 1,2:3\\'
PASSWORD = 'pa\\ss;wo,rd:"x"'


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.mark.parametrize(("device", "width", "height"), [("phone", 390, 844), ("tablet", 1280, 800)])
def test_the_control_page_shows_both_codes(
    mock_nm: MockNM, browser: Any, tmp_path: Path, device: str, width: int, height: int
) -> None:
    port = free_port()
    config = tmp_path / "companion.toml"
    config.write_text(
        f'[server]\ntoken = "{TOKEN}"\n[journal]\npath = "{tmp_path}/journal.db"\n'
        f'[network]\nhotspot = "on"\nssid = {toml_string(SSID)}\npassword = {toml_string(PASSWORD)}\n'
    )
    with running_companion(tmp_path / "journal.db", "--config", str(config), port=port) as server:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{server.url}/control#token={TOKEN}")
        page.wait_for_function(
            "document.querySelectorAll('#wifi-codes img').length === 2"
            " && [...document.querySelectorAll('#wifi-codes img')].every((i) => i.complete && i.naturalWidth)"
            " && /phone\\(s\\) joined/.test(document.getElementById('wifi-state').textContent)"
        )
        page.locator("#wifi-panel").scroll_into_view_if_needed()
        shot = tmp_path / f"control-wifi-{device}.png"
        page.locator("#wifi-panel").screenshot(path=str(shot))
        assert decode_image(shot) == [wifi_qr_text(SSID, PASSWORD), f"http://10.42.0.1:{port}/"]
        assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
        assert PASSWORD in page.locator("#wifi-codes").inner_text()

        scoreboard = browser.new_page(viewport={"width": width, "height": height})
        scoreboard.goto(server.url + "/")
        scoreboard.wait_for_load_state("networkidle")
        assert PASSWORD not in scoreboard.content() and scoreboard.locator("#wifi-panel").count() == 0
        page.close()
        scoreboard.close()


def test_without_the_token_the_panel_asks_for_it(mock_nm: MockNM, browser: Any, tmp_path: Path) -> None:
    config = tmp_path / "companion.toml"
    config.write_text(f'[server]\ntoken = "{TOKEN}"\n[network]\nhotspot = "off"\n')
    with running_companion(tmp_path / "journal.db", "--config", str(config)) as server:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(server.url + "/control")
        page.wait_for_function("!document.getElementById('wifi-panel').hidden")
        assert "Save the table's token" in page.locator("#wifi-state").inner_text()
        assert page.locator("#wifi-codes img").count() == 0
        page.close()
