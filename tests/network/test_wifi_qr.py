"""The Wi-Fi QR code: its text with every escape, read back by a real decoder (zxing-cpp) from what
`companion url` prints; the password generated once and kept."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from companion.appliance.cli import main
from companion.core.config import ConfigError, NetworkSettings, load_config, parse_network
from companion.network.wifi import hotspot_password, wifi_qr_text
from tests.qr_decode import decode_terminal

NASTY_SSID = 'Ann\'s "table"; 1,2:3\\'
NASTY_PASSWORD = 'pa\\ss;wo,rd:"x"'


def test_every_special_character_is_escaped() -> None:
    assert wifi_qr_text(NASTY_SSID, NASTY_PASSWORD) == (
        'WIFI:T:WPA;S:Ann\'s \\"table\\"\\; 1\\,2\\:3\\\\;P:pa\\\\ss\\;wo\\,rd\\:\\"x\\";;'
    )
    assert wifi_qr_text("Table", "abcdefgh") == "WIFI:T:WPA;S:Table;P:abcdefgh;;"


def test_the_password_is_generated_once_and_kept_private(tmp_path: Path) -> None:
    path = tmp_path / "state" / "network.json"
    first = hotspot_password(NetworkSettings(), path)
    assert len(first) == 12 and first.isalnum()
    assert hotspot_password(NetworkSettings(), path) == first == json.loads(path.read_text())["password"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert hotspot_password(NetworkSettings(password="configured"), path) == "configured"


def test_companion_url_prints_the_wifi_qr_then_the_scoreboards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "companion.toml"
    ssid = NASTY_SSID.replace("\\", "\\\\").replace('"', '\\"')
    password = NASTY_PASSWORD.replace("\\", "\\\\").replace('"', '\\"')
    config.write_text(
        f'[server]\nhost = "192.0.2.7"\nport = 8000\n[journal]\npath = "{tmp_path}/journal.db"\n'
        f'[network]\nssid = "{ssid}"\npassword = "{password}"\n'
    )
    assert main(["url", "--config", str(config)]) == 0
    printed = capsys.readouterr().out
    assert decode_terminal(printed) == [wifi_qr_text(NASTY_SSID, NASTY_PASSWORD), "http://192.0.2.7:8000/"]
    assert f"{NASTY_SSID}, password {NASTY_PASSWORD}" in printed
    assert "http://10.42.0.1:8000/" in printed  # the scoreboard on the table's own Wi-Fi


def test_companion_url_without_network_shows_only_the_scoreboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "companion.toml"
    config.write_text(f'[server]\nhost = "192.0.2.7"\n[journal]\npath = "{tmp_path}/journal.db"\n')
    assert main(["url", "--config", str(config)]) == 0
    assert decode_terminal(capsys.readouterr().out) == ["http://192.0.2.7:8000/"]
    assert not (tmp_path / "network.json").exists()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"hotspot": "sometimes"}, 'hotspot must be "auto", "on" or "off"'),
        ({"wait": 2}, "wait must be from 5 to 3600 seconds"),
        ({"wait": True}, "wait must be a whole number"),
        ({"ssid": "x" * 33}, "ssid must be at most 32 bytes"),
        ({"password": "short"}, "password must be 8 to 63 printable ASCII"),
        ({"password": "pässwörd"}, "password must be 8 to 63 printable ASCII"),
        ({"interface": "wlan0; rm"}, "interface must be a network interface name"),
        ({"radio": "on"}, "[network] has unknown keys: radio"),
    ],
)
def test_bad_network_settings_are_named(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        parse_network(raw)


def test_network_settings_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "companion.toml"
    path.write_text('[network]\nhotspot = "on"\nwait = 30\nssid = "Club"\ninterface = "wlan1"\n')
    network = load_config(path).network
    assert network == NetworkSettings(hotspot="on", wait=30, ssid="Club", interface="wlan1")
    assert load_config(None).network is None  # no [network]: the Wi-Fi is never touched
    path.write_text("[network]\nwait = 4\n")
    with pytest.raises(ConfigError, match=r"companion.toml: \[network\] wait must be from 5 to 3600"):
        load_config(path)


def test_the_example_config_has_the_defaults() -> None:
    example = Path(__file__).resolve().parents[2] / "hardware" / "companion.example.toml"
    assert load_config(example, env={}).network == NetworkSettings()
