"""`companion run` with [network] in a subprocess, on python-dbusmock's NetworkManager (a private
dbus-daemon, tests/nm_mock.py): the access point comes up by itself when no network connects;
`companion hotspot off|on|auto|status` steer it through the daemon; `companion doctor` reports it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from companion.appliance.cli import main
from companion.appliance.doctor import run_checks
from companion.appliance.doctor.network import check_network
from companion.core.config import load_config
from companion.network.nm import OWN_UUID
from tests.nm_mock import MockNM
from tests.servers import TOKEN, free_port, running_companion
from tests.waiting import wait_for


def config_file(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "companion.toml"
    path.write_text(
        f'[server]\ntoken = "{TOKEN}"\nport = {port}\n[journal]\npath = "{tmp_path}/journal.db"\n'
        '[network]\nhotspot = "auto"\nwait = 5\nssid = "Table Wi-Fi"\n'
    )
    return path


def uuids(nm: MockNM) -> list[str]:
    return [a["uuid"] for a in nm.active() if nm.device in a["devices"]]


def test_the_daemon_raises_it_and_the_command_steers_it(
    mock_nm: MockNM, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()
    config = config_file(tmp_path, port)
    with running_companion(tmp_path / "journal.db", "--config", str(config), port=port) as server:
        started = time.monotonic()
        wait_for(lambda: uuids(mock_nm) == [OWN_UUID], 20.0, 0.1)  # no network: up after `wait` (5 s)
        assert time.monotonic() - started > 3
        capsys.readouterr()
        assert main(["hotspot", "status", "--config", str(config)]) == 0
        assert capsys.readouterr().out.splitlines() == [
            "mode: hotspot (hold: auto)",
            "access point: Table Wi-Fi, 0 client(s)",
        ]
        checks = [c for c in run_checks(config) if c.name == "network"]
        assert [c.line() for c in checks] == [
            "ok   network: hotspot: the access point Table Wi-Fi is up, 0 client(s)"
        ]

        assert main(["hotspot", "off", "--config", str(config)]) == 0
        assert capsys.readouterr().out.startswith("mode: off (hold: off)")
        assert uuids(mock_nm) == []
        assert main(["hotspot", "on", "--config", str(config)]) == 0
        assert capsys.readouterr().out.startswith("mode: hotspot (hold: on)")
        assert uuids(mock_nm) == [OWN_UUID]
        assert server.call("GET", "/api/hotspot")["hold"] == "on"
    # With no companion running, doctor asks NetworkManager itself (the access point stayed up).
    (check,) = check_network(load_config(config), None)
    assert check.line() == "ok   network: hotspot: the access point Table Wi-Fi is up (no companion running)"


def test_the_command_says_when_the_daemon_is_away(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = config_file(tmp_path, free_port())
    assert main(["hotspot", "on", "--config", str(config)]) == 1
    assert "the daemon does not answer" in capsys.readouterr().err
    config.write_text(f'[server]\ntoken = "{TOKEN}"\n')
    assert main(["hotspot", "status", "--config", str(config)]) == 2
    assert "no [network]" in capsys.readouterr().err
