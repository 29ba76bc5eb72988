"""The phones' connectivity probes and the Host guard in hotspot mode, and the control call that
carries the Wi-Fi password, through the Flask test client of a whole daemon whose access point
is raised on python-dbusmock's NetworkManager (tests/nm_mock.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.daemon import Daemon
from companion.core.config import NetworkSettings
from companion.webapp.hotspot import PROBES
from tests.conftest import AUTH, make_config
from tests.nm_mock import MockNM

EXPECTED = {  # what each platform's own server answers
    "/generate_204": (204, ""),
    "/gen_204": (204, ""),
    "/hotspot-detect.html": (200, "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"),
    "/library/test/success.html": (
        200,
        "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>",
    ),
    "/connecttest.txt": (200, "Microsoft Connect Test"),
    "/ncsi.txt": (200, "Microsoft NCSI"),
    "/canonical.html": (
        200,
        '<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>',
    ),
    "/success.txt": (200, "success\n"),
}
HOSTS = {
    "/generate_204": "connectivitycheck.gstatic.com",
    "/gen_204": "clients3.google.com",
    "/hotspot-detect.html": "captive.apple.com",
    "/library/test/success.html": "www.apple.com",
    "/connecttest.txt": "www.msftconnecttest.com",
    "/ncsi.txt": "www.msftncsi.com",
    "/canonical.html": "detectportal.firefox.com",
    "/success.txt": "detectportal.firefox.com",
}


@pytest.fixture
def table(mock_nm: MockNM, tmp_path: Path) -> Iterator[Daemon]:
    config = make_config(tmp_path / "journal.db")
    config.network = NetworkSettings(hotspot="on", ssid="Table")
    running = Daemon(config)  # not started: the test makes each look itself
    yield running
    running.close()


def test_every_probe_is_answered_with_its_own_host_while_the_access_point_is_up(table: Daemon) -> None:
    assert table.network is not None
    table.network.tick()
    assert table.network.up
    client = table.app.test_client()
    assert set(PROBES) == set(EXPECTED)
    for path, (status, body) in EXPECTED.items():
        response = client.get(path, headers={"Host": HOSTS[path]})
        assert (response.status_code, response.get_data(as_text=True)) == (status, body), path
        assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    "path", ["/", "/api/state", "/healthz", "/control", "/api/hotspot", "/generate_204x"]
)
def test_a_foreign_host_on_any_other_path_is_still_refused(table: Daemon, path: str) -> None:
    assert table.network is not None
    table.network.tick()
    response = table.app.test_client().get(path, headers={"Host": "connectivitycheck.gstatic.com", **AUTH})
    assert response.status_code == 421


def test_without_the_access_point_a_foreign_host_is_refused_even_for_a_probe(table: Daemon) -> None:
    assert table.network is not None
    table.network.command("off")
    assert not table.network.up
    client = table.app.test_client()
    assert client.get("/generate_204", headers={"Host": "connectivitycheck.gstatic.com"}).status_code == 421
    assert client.get("/generate_204", headers={"Host": "localhost"}).status_code == 204  # its own name


def test_the_password_is_only_in_the_control_call(table: Daemon) -> None:
    assert table.network is not None
    table.network.tick()
    password = table.network.password
    client = table.app.test_client()
    for path in ("/", "/api/state", "/healthz", "/api/games", "/control", "/history", "/api/history"):
        assert password not in client.get(path).get_data(as_text=True), path
    health = client.get("/healthz").get_json()["network"]
    assert health["mode"] == "hotspot" and health["ssid"] == "Table"
    assert client.get("/api/hotspot").status_code == 401
    answer = client.get("/api/hotspot", headers=AUTH).get_json()
    assert answer["password"] == password and answer["wifi"] == f"WIFI:T:WPA;S:Table;P:{password};;"
    assert answer["scoreboard"] == "http://10.42.0.1/" and answer["wifi_qr"].startswith("data:image/svg+xml")


def test_the_hold_by_the_api_and_a_bad_one(table: Daemon) -> None:
    cues: list[Any] = []
    table.table.listeners.append(lambda kind, cue: cues.append(cue.to_json()) if kind == "cue" else None)
    client = table.app.test_client()
    assert client.post("/api/hotspot", json={"hold": "off"}).status_code == 401
    answer = client.post("/api/hotspot", json={"hold": "off"}, headers=AUTH).get_json()
    assert answer["hold"] == "off" and answer["mode"] == "off"
    response = client.post("/api/hotspot", json={"hold": "maybe"}, headers=AUTH)
    assert response.status_code == 400 and "hold" in response.get_json()["error"]
    assert cues[-1]["cue"] == "error"
    assert client.post("/api/hotspot", json={"hold": "on"}, headers=AUTH).get_json()["mode"] == "hotspot"


def test_a_table_without_network_answers_404_token_or_not(client: Any) -> None:
    for headers in ({}, AUTH):
        assert client.get("/api/hotspot", headers=headers).status_code == 404
        assert client.post("/api/hotspot", json={"hold": "on"}, headers=headers).status_code == 404
    # and no probe passes the Host guard: there is no access point
    assert client.get("/generate_204", headers={"Host": "connectivitycheck.gstatic.com"}).status_code == 421
