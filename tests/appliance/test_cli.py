"""The `companion` command's one-line errors and its demo."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.servers import free_port, run_arguments


def companion(
    *args: str, env: dict[str, str] | None = None, timeout: float = 20
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "COMPANION_TOKEN"}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "companion.appliance.cli", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_run_without_a_token_says_how_to_give_one(tmp_path: Path) -> None:
    result = companion("run", "--mock-pins", "--db", str(tmp_path / "j.db"))
    assert result.returncode == 2
    assert (
        result.stderr.strip().splitlines()[-1].startswith("companion: no control token: set COMPANION_TOKEN")
    )


def test_an_unreadable_config_is_one_line(tmp_path: Path) -> None:
    missing = companion("run", "--config", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2
    assert (
        missing.stderr.strip()
        == f"companion: cannot read the config file {tmp_path / 'nope.toml'}: No such file or directory"
    )
    broken = tmp_path / "broken.toml"
    broken.write_text("[server\nport = 1\n")
    result = companion("run", "--config", str(broken))
    assert result.returncode == 2
    assert "is not valid TOML" in result.stderr and result.stderr.count("\n") == 1
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[server]\nport = "eighty"\n')
    result = companion("run", "--config", str(wrong))
    assert result.stderr.strip() == f"companion: {wrong}: [server] port must be a whole number, not 'eighty'"


def test_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = companion(*run_arguments(port, tmp_path / "j.db"), env={"COMPANION_TOKEN": "t"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"companion: cannot listen on 127.0.0.1:{port}: Address already in use"
    )


def test_the_demo_prints_its_urls_and_serves(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "companion.appliance.cli", "demo", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline() for _ in range(3)]
        assert f"scoreboard: http://127.0.0.1:{port}/" in lines[1]
        assert f"control:    http://127.0.0.1:{port}/control#token=" in lines[2]
        token = lines[2].strip().split("#token=")[1]
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/games",
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            data=b'{"game": "spy-team", "players": ["A", "B", "C", "D"]}',
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 201
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
            assert json.load(response)["gpio"] == "mock"
    finally:
        process.terminate()
        process.wait(timeout=5)


def test_a_port_out_of_range_or_a_bool_is_refused(tmp_path: Path) -> None:
    for value, message in (
        ("true", "must be a whole number, not True"),
        ("99999", "from 1 to 65535, not 99999"),
    ):
        config = tmp_path / "c.toml"
        config.write_text(f"[server]\nport = {value}\n")
        result = companion("run", "--config", str(config))
        assert result.returncode == 2 and message in result.stderr, result.stderr


def test_run_keeps_its_token_out_of_its_output(tmp_path: Path) -> None:
    """Under systemd the output goes to the system log: the control link carries no token."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "COMPANION_TOKEN"}
    env["COMPANION_TOKEN"] = "do-not-log-me"
    process = subprocess.Popen(
        [sys.executable, "-m", "companion.appliance.cli", *run_arguments(port, tmp_path / "j.db")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = []
        while not any("control:" in line for line in lines):
            lines.append(process.stdout.readline())
        assert lines[-1].strip() == f"control:    http://127.0.0.1:{port}/control#token=<token>"
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=5)
    assert "do-not-log-me" not in "".join(lines) + output


def test_a_misspelt_key_is_named(tmp_path: Path) -> None:
    for text, message in (
        ("[server]\nprot = 80\n", "[server] has unknown keys: prot"),
        ("[cardz]\npath = 'x'\n", "the config has unknown keys: cardz"),
        ("[journal]\npaht = 'x'\n", "[journal] has unknown keys: paht"),
    ):
        config = tmp_path / "c.toml"
        config.write_text(text)
        result = companion("run", "--config", str(config))
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1


BAD_FILES = {
    "not UTF-8": (b"[server]\nport = 80 # caf\xe9\n", "not UTF-8 text (byte 25 is 0xe9)"),
    "a pin gpiozero refuses": (
        b"[pins]\nbuzzer = 99\n",
        "[pins] buzzer must be a GPIO number or false, not 99",
    ),
    "a pin name gpiozero refuses": (b'[pins]\nbuzzer = "GPIO99"\n', "[pins]: GPIO99 is not a valid pin name"),
    "a pin used twice": (b"[pins]\nbuzzer = 17\nstatus_led = [17, 22, 23]\n", "GPIO 17 is used twice"),
    "nested 5,000 deep": (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deep"),
    "a wrong type": (b'[server]\nhosts = "table.lan"\n', "[server] hosts must be a list"),
}


def test_every_bad_config_is_one_line_naming_the_file_and_exit_status_2(tmp_path: Path) -> None:
    """Issue 13: these crashed with a traceback (exit 1, and systemd retried them)."""
    for what, (content, cause) in BAD_FILES.items():
        config = tmp_path / "bad.toml"
        config.write_bytes(content)
        result = companion(
            "run",
            "--mock-pins",
            "--config",
            str(config),
            "--db",
            str(tmp_path / "j.db"),
            env={"COMPANION_TOKEN": "t"},
        )
        errors = [line for line in result.stderr.splitlines() if "GPIO: mock pins" not in line]
        assert result.returncode == 2, (what, result.stderr)
        assert errors == [errors[0]] and errors[0].startswith(f"companion: {config}: "), (what, result.stderr)
        assert cause in errors[0], (what, result.stderr)


def test_a_journal_with_another_schema_is_one_line(tmp_path: Path) -> None:
    import sqlite3

    journal = tmp_path / "j.db"
    with sqlite3.connect(journal) as db:
        db.execute("CREATE TABLE entries (x, y, z)")
    result = companion("run", "--mock-pins", "--db", str(journal), env={"COMPANION_TOKEN": "t"})
    errors = [line for line in result.stderr.splitlines() if "GPIO: mock pins" not in line]
    assert result.returncode == 2 and len(errors) == 1, result.stderr
    assert errors[0].startswith(f"companion: {journal}: not a journal this version can use"), errors
