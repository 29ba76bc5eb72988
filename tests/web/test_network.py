"""What the table answers to on its network: only its own names (no DNS rebinding), and a clear
4xx for any malformed request (never a 500)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.daemon import Daemon
from companion.core.config import Config, ConfigError, load_config
from tests.conftest import AUTH, make_config

BODY_ROUTES = ["/api/games", "/api/actions", "/api/taps", "/api/cards/enroll", "/api/cards/session"]


@pytest.mark.parametrize(
    "path", ["/", "/control", "/static/js/common.js", "/api/state", "/api/events", "/healthz"]
)
def test_a_foreign_host_name_is_refused_everywhere(client: Any, path: str) -> None:
    """A page elsewhere that points its own name at the table (DNS rebinding) sends that name."""
    response = client.get(path, headers={"Host": "evil.example:8000"})
    assert response.status_code == 421
    assert "evil.example" in response.get_json()["error"]


def test_a_foreign_host_cannot_steer_the_table_even_with_the_token(client: Any, daemon: Daemon) -> None:
    response = client.post(
        "/api/games", json={"game": "spy", "players": ["A", "B"]}, headers={**AUTH, "Host": "attacker.test"}
    )
    assert response.status_code == 421 and daemon.table.game is None


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8000",
        "192.168.1.20",
        "[::1]:8000",
        "[fe80::1]",
        "localhost:8000",
        "LOCALHOST.",
        socket.gethostname(),
        f"{socket.gethostname()}.local:80",
    ],
)
def test_the_tables_own_names_and_addresses_are_answered(client: Any, host: str) -> None:
    assert client.get("/api/state", headers={"Host": host}).status_code == 200


def test_names_listed_in_the_config_are_answered(tmp_path: Path) -> None:
    config = make_config(tmp_path / "journal.db")
    config.hosts = ["Table.Home.Arpa"]
    daemon = Daemon(config)
    try:
        client = daemon.app.test_client()
        assert client.get("/api/state", headers={"Host": "table.home.arpa:8000"}).status_code == 200
        assert client.get("/api/state", headers={"Host": "other.home.arpa"}).status_code == 421
        assert client.get("/api/state", headers={"Host": "table.home.arpa:x"}).status_code == 421
    finally:
        daemon.close()


@pytest.mark.parametrize("path", BODY_ROUTES)
def test_a_body_nested_a_thousand_deep_is_a_400_not_a_500(client: Any, path: str) -> None:
    """Issue 13: JSON nested ~1,000 deep raised RecursionError in json_body (a 500)."""
    response = client.post(path, data="[" * 3000 + "]" * 3000, headers=AUTH)
    assert response.status_code == 400, response.data
    response = client.post(path, data='{"a":' * 2000 + "1" + "}" * 2000, headers=AUTH)
    assert response.status_code == 400, response.data


def test_the_server_settings_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "companion.toml"
    path.write_text('[server]\nhosts = ["table.lan"]\nscoreboards = 48\nstreams_per_address = 2\n')
    config = load_config(path, env={})
    assert (config.hosts, config.scoreboards, config.streams_per_address) == (["table.lan"], 48, 2)
    assert Config().scoreboards == 32
    for bad in ['hosts = "table.lan"', "hosts = [1]", "scoreboards = 0", "streams_per_address = 0"]:
        path.write_text(f"[server]\n{bad}\n")
        with pytest.raises(ConfigError, match=r"\[server\]"):
            load_config(path, env={})


def test_a_registry_with_a_foreign_schema_is_named_and_its_routes_answer_503(tmp_path: Path) -> None:
    """Issue 13: `CREATE TABLE tags (x)` in cards.db made the card routes answer 500 while /healthz
    said the registry was ok."""
    import sqlite3

    with sqlite3.connect(tmp_path / "cards.db") as db:
        db.execute("CREATE TABLE tags (x)")
    daemon = Daemon(make_config(tmp_path / "journal.db"))
    try:
        client = daemon.app.test_client()
        health = client.get("/healthz").get_json()
        assert health["registry"].startswith("damaged:") and "unexpected schema" in health["registry"]
        assert "cards.db" in health["registry"]
        summary = client.get("/api/cards", headers=AUTH)
        assert summary.status_code == 200  # the panel shows what is wrong
        card = next(iter(daemon.catalog["spy"].cards))
        enroll = client.post("/api/cards/enroll", json={"uid": "04a22b3c", "card": card}, headers=AUTH)
        assert enroll.status_code == 503 and "damaged" in enroll.get_json()["error"]
        export = client.get("/api/cards/export", headers=AUTH)
        assert export.status_code == 503 and "cards.db" in export.get_json()["error"]
        assert (
            client.post("/api/games", json={"game": "spy", "players": ["A", "B"]}, headers=AUTH).status_code
            == 201
        )
    finally:
        daemon.close()
    from companion.readers.registry import check_registry

    status, message, fix = check_registry(tmp_path / "cards.db")
    assert status == "FAIL" and "unexpected schema" in message and "companion cards import" in fix
