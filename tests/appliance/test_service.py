"""The appliance side: sd_notify (READY, WATCHDOG, STOPPING) over a real unix datagram socket, a
SIGTERM stop within 2 s with scoreboards connected, `systemd-analyze verify` on the unit, and the
installer and uninstaller in their dry-run mode (files staged under a temporary root).

`systemd-analyze` comes from Debian's `systemd` package: without it the unit's tests skip, except
under CI=true, where they fail. `shellcheck` (Debian's `shellcheck`) is optional: it skips without.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.systemd import Notifier, Service, Watchdog, daemon_alive, watchdog_interval
from companion.core.config import load_config
from tests.table.test_crash import Companion, free_port

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "companion.service"
INSTALL = ROOT / "systemd" / "install.sh"
UNINSTALL = ROOT / "systemd" / "uninstall.sh"


def need(tool: str, package: str, required_in_ci: bool = True) -> str:
    path = shutil.which(tool)
    if path is None:
        message = f"{tool} is not installed (Debian package: {package})"
        if required_in_ci and os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


# sd_notify


class NotifySocket:
    """What systemd listens on: a unix datagram socket; collects every message sent to it."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.messages: list[str] = []

    def wait_for(self, line: str, timeout: float = 20) -> str:
        """The first message holding `line` (as one of its lines), received within `timeout`."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for message in self.messages[seen:]:
                if line in message.split("\n"):
                    return message
            seen = len(self.messages)
            with contextlib.suppress(TimeoutError):
                self.messages.append(self.sock.recv(4096).decode())
        raise AssertionError(f"no {line!r} within {timeout} s; got {self.messages}")

    def drain(self, seconds: float) -> list[str]:
        end, got = time.monotonic() + seconds, []
        while time.monotonic() < end:
            with contextlib.suppress(TimeoutError):
                got.append(self.sock.recv(4096).decode())
        self.messages += got
        return got

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[NotifySocket]:
    listener = NotifySocket(str(tmp_path / "notify.sock"))
    yield listener
    listener.close()


def test_the_daemon_says_ready_once_it_listens_then_feeds_the_watchdog_and_says_stopping(
    tmp_path: Path, notify_socket: NotifySocket
) -> None:
    env = {"NOTIFY_SOCKET": str(tmp_path / "notify.sock"), "WATCHDOG_USEC": "400000"}
    with Companion(tmp_path / "journal.db", env=env) as server:
        server.start(wait=False)
        ready = notify_socket.wait_for("READY=1")
        assert f"STATUS=scoreboard on port {server.port}" in ready.split("\n")
        # READY=1 means it listens: the very first request is answered.
        with urllib.request.urlopen(server.url + "/healthz", timeout=5) as response:
            assert response.status == 200
        pings = [m for m in notify_socket.drain(1.0) if m == "WATCHDOG=1"]
        assert 3 <= len(pings) <= 8  # every 0.2 s: half of WATCHDOG_USEC
        assert server.stop() == 0
        notify_socket.wait_for("STOPPING=1", timeout=5)


def test_without_notify_socket_nothing_is_sent_and_nothing_breaks() -> None:
    assert not Notifier.from_env({}).enabled
    assert Notifier.from_env({}).notify("READY=1") is False


def test_notify_reaches_an_abstract_socket() -> None:
    name = f"companion-test-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        assert Notifier(f"@{name}").notify("READY=1", "STATUS=hi")
        assert sock.recv(4096) == b"READY=1\nSTATUS=hi"


def test_watchdog_interval_is_half_of_watchdog_usec_and_only_for_its_process() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, pid=2) is None
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "2"}, pid=2) == 15.0
    assert watchdog_interval({}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None


def test_the_watchdog_goes_quiet_while_the_table_is_stuck(daemon: Any, tmp_path: Path) -> None:
    listener = NotifySocket(str(tmp_path / "wd.sock"))
    watchdog = Watchdog(Notifier(str(tmp_path / "wd.sock")), 0.05, lambda: daemon_alive(daemon)).start()
    try:
        assert len(listener.drain(0.4)) >= 3  # alive: pings
        with daemon.table._lock:  # a hung table (a handler stuck forever) holds this lock
            listener.drain(0.2)  # a ping already under way may still arrive
            assert listener.drain(0.5) == []  # stuck: silence, so systemd restarts us
        assert len(listener.drain(0.4)) >= 3  # free again: pings again
    finally:
        watchdog.stop()
        listener.close()


def test_service_ready_and_stopping_without_systemd_do_nothing(daemon: Any) -> None:
    service = Service.ready(daemon, status="x", env={})
    assert service.watchdog is None
    service.stopping()


# SIGTERM


def test_sigterm_stops_within_two_seconds_with_scoreboards_connected(tmp_path: Path) -> None:
    with Companion(tmp_path / "journal.db").start() as server:
        streams = []
        for _ in range(3):  # three tablets on the event stream
            stream = urllib.request.urlopen(server.url + "/api/events", timeout=10)
            assert stream.readline() == b"retry: 2000\n"
            streams.append(stream)
        started = time.monotonic()
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=10) == 0
        assert time.monotonic() - started < 2.0
        for stream in streams:  # each stream was ended, not cut: it reads to its end
            stream.read()
            stream.close()
        assert "Traceback" not in server.output()


# The unit


def unit_settings(text: str) -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    analyze = need("systemd-analyze", "systemd")
    companion = Path(sys.executable).with_name("companion")
    assert companion.exists(), "the package's console script, installed with the venv"
    # The unit runs /opt/companion/bin/companion, which exists only on an installed Pi: point that
    # one line at this venv's script, keep every other line as shipped.
    text = UNIT.read_text()
    copy, count = re.subn(
        r"^ExecStart=/opt/companion/bin/companion ", f"ExecStart={companion} ", text, flags=re.M
    )
    assert count == 1
    (tmp_path / "companion.service").write_text(copy)
    result = subprocess.run(
        [analyze, "verify", str(tmp_path / "companion.service")], capture_output=True, text=True, timeout=60
    )
    # verify only warns (exit 0) about unknown keys or bad values: any output is a finding.
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr


def test_systemd_analyze_verify_catches_a_broken_unit(tmp_path: Path) -> None:
    """The test above can fail: a misspelt key or a missing program is reported."""
    analyze = need("systemd-analyze", "systemd")
    broken = UNIT.read_text().replace("ProtectSystem=strict", "ProtectSystm=strict")
    (tmp_path / "companion.service").write_text(broken)
    result = subprocess.run(
        [analyze, "verify", str(tmp_path / "companion.service")], capture_output=True, text=True, timeout=60
    )
    assert "ProtectSystm" in result.stderr and "/opt/companion/bin/companion" in result.stderr


def test_the_unit_asks_for_what_the_appliance_needs() -> None:
    unit = unit_settings(UNIT.read_text())
    assert unit["Type"] == ["notify"] and unit["NotifyAccess"] == ["main"]
    assert int(unit["WatchdogSec"][0]) >= 10
    # Always: on-failure takes SIGHUP for a clean exit (a serial reader unplugged hangs it up).
    assert unit["Restart"] == ["always"] and unit["RestartPreventExitStatus"] == ["2"]
    assert "StartLimitBurst" in unit and "StartLimitIntervalSec" in unit
    assert unit["User"] == ["companion"] and unit["Group"] == ["companion"]
    assert unit["StateDirectory"] == ["companion"] and unit["ConfigurationDirectory"] == ["companion"]
    assert unit["WorkingDirectory"] == ["/var/lib/companion"]  # writable, for lgpio's pipes
    assert unit["ExecStart"] == ["/opt/companion/bin/companion run --config /etc/companion/companion.toml"]
    for key, value in {
        "ProtectSystem": "strict",
        "NoNewPrivileges": "yes",
        "PrivateTmp": "yes",
        "ProtectHome": "yes",
    }.items():
        assert unit[key] == [value], key
    # These would cut the daemon off its pins and reader (see the comments in the unit).
    for key in ("PrivateDevices", "DevicePolicy", "DeviceAllow", "ProtectClock", "PrivateUsers"):
        assert key not in unit, key
    assert int(unit["TimeoutStopSec"][0]) >= 2


# The installer, in its dry-run mode


def checkout(tmp_path: Path, rules: bool = True) -> Path:
    """A copy of what the installer reads from the project, with udev rules and a blacklist."""
    source = tmp_path / "checkout"
    (source / "systemd").mkdir(parents=True)
    (source / "docs").mkdir()
    for script in (ROOT / "systemd").iterdir():  # the scripts, the unit, the polkit and NM files
        shutil.copy2(script, source / "systemd" / script.name)
    shutil.copy2(ROOT / "docs" / "operations.md", source / "docs" / "operations.md")
    if rules:
        (source / "hardware" / "udev").mkdir(parents=True)
        (source / "hardware" / "udev" / "60-test-reader.rules").write_text(
            'SUBSYSTEM=="usb", GROUP="plugdev"\n'
        )
        (source / "hardware" / "blacklist-test.conf").write_text("blacklist pn533_usb\n")
    return source


def install(source: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DESTDIR": str(root)}
    return subprocess.run(
        ["bash", str(source / "systemd" / "install.sh"), "--no-apt", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def commands(output: str) -> list[str]:
    return [line[2:] for line in output.splitlines() if line.startswith("+ ")]


def test_the_installer_stages_every_file_and_plans_every_command(tmp_path: Path) -> None:
    source, root = checkout(tmp_path), tmp_path / "root"
    result = install(source, root, "--port", "8123")
    assert result.returncode == 0, result.stderr
    planned = commands(result.stdout)

    assert (root / "etc/systemd/system/companion.service").read_text() == UNIT.read_text()
    assert (root / "etc/udev/rules.d/60-test-reader.rules").exists()
    assert (root / "etc/modprobe.d/blacklist-test.conf").read_text() == "blacklist pn533_usb\n"
    assert os.readlink(root / "usr/local/bin/companion") == "/opt/companion/bin/companion"
    assert (root / "opt/companion/share/doc/operations.md").exists()
    # The power-off hold's and the hotspot's polkit rules, the hotspot's NetworkManager files.
    polkit = root / "etc/polkit-1/rules.d"
    shipped = ROOT / "systemd"
    assert (polkit / "50-companion-poweroff.rules").read_text() == (
        shipped / "companion-poweroff.rules"
    ).read_text()
    assert (polkit / "50-companion-network.rules").read_text() == (
        shipped / "companion-network.rules"
    ).read_text()
    nm = root / "etc/NetworkManager"
    assert (nm / "dnsmasq-shared.d/companion.conf").read_text() == (
        shipped / "companion-hotspot-dnsmasq.conf"
    ).read_text()
    dispatcher = nm / "dispatcher.d/90-companion-hotspot"
    assert (
        dispatcher.stat().st_mode & 0o777 == 0o755
        and dispatcher.read_bytes() == (shipped / "companion-hotspot-dispatcher").read_bytes()
    )

    config_file = root / "etc/companion/companion.toml"
    assert config_file.stat().st_mode & 0o777 == 0o640  # the token is for root and the service only
    assert (root / "etc/companion").stat().st_mode & 0o777 == 0o750
    config = load_config(config_file, env={})
    assert config.port == 8123 and config.token and len(config.token) >= 32
    assert str(config.db) == "/var/lib/companion/journal.db"

    assert any(c.startswith("useradd --system") and c.endswith(" companion") for c in planned)
    # Each line shown can be pasted into a shell: arguments with spaces come out quoted.
    [useradd] = [shlex.split(c) for c in planned if c.startswith("useradd ")]
    assert useradd[useradd.index("--comment") + 1] == "Table Companion" and useradd[-1] == "companion"
    # pins, USB, serial, keyboard, I2C and SPI readers
    for group in ("gpio", "plugdev", "dialout", "input", "i2c", "spi"):
        exists = subprocess.run(["getent", "group", group], capture_output=True).returncode == 0
        assert (f"usermod -aG {group} companion" in planned) == exists, group
    assert "python3 -m venv --system-site-packages /opt/companion" in planned
    pip = "/opt/companion/bin/pip install --no-cache-dir --upgrade --upgrade-strategy only-if-needed"
    assert f"{pip} {source}" in planned
    assert "chown root:companion /etc/companion/companion.toml" in planned
    assert "udevadm control --reload-rules" in planned
    order = [
        "systemctl daemon-reload",
        "systemctl enable companion",
        "systemctl restart companion",
        "/opt/companion/bin/companion url --config /etc/companion/companion.toml",
    ]
    assert [c for c in planned if c in order] == order

    manifest = (root / "opt/companion/installed-files").read_text().split()
    assert (
        "/etc/udev/rules.d/60-test-reader.rules" in manifest
        and "/etc/systemd/system/companion.service" in manifest
    )

    # The config it wrote is one the daemon accepts, as `companion doctor` says.
    report = subprocess.run(
        [sys.executable, "-m", "companion.appliance.cli", "doctor", "--config", str(config_file),
         "--db", str(tmp_path / "journal.db"), "--port", str(free_port())],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "ok   config:" in report.stdout and "ok   token:" in report.stdout, report.stdout


def test_the_installer_writes_the_reader_it_finds_into_the_config(tmp_path: Path) -> None:
    """`auto` would search again at every start; the reader found at install time is named."""
    source, root = checkout(tmp_path), tmp_path / "root"
    python = root / "opt/companion/bin/python"  # the venv's python, here one that finds a PN532
    python.parent.mkdir(parents=True)
    python.write_text('#!/bin/sh\n[ "$2" = companion.readers.families ] && echo tty:USB0:pn532\n')
    python.chmod(0o755)
    result = install(source, root)
    assert result.returncode == 0, result.stderr
    assert "found a reader at tty:USB0:pn532" in result.stdout
    config = load_config(root / "etc/companion/companion.toml", env={})
    assert config.readers == [{"device": "tty:USB0:pn532"}]
    # Nothing found: "auto".
    python.write_text("#!/bin/sh\nexit 1\n")
    (root / "etc/companion/companion.toml").unlink()
    assert install(source, root).returncode == 0
    assert load_config(root / "etc/companion/companion.toml", env={}).readers == [{"device": "auto"}]


def test_installing_again_keeps_the_config_and_drops_files_no_longer_shipped(tmp_path: Path) -> None:
    source, root = checkout(tmp_path), tmp_path / "root"
    assert install(source, root).returncode == 0
    token = load_config(root / "etc/companion/companion.toml", env={}).token
    shutil.rmtree(source / "hardware")
    again = install(source, root, "--port", "9000")
    assert again.returncode == 0, again.stderr
    assert "kept the existing config" in again.stdout and "--port ignored" in again.stdout
    assert load_config(root / "etc/companion/companion.toml", env={}).token == token
    assert not (root / "etc/udev/rules.d/60-test-reader.rules").exists()
    assert "udevadm control --reload-rules" not in commands(again.stdout)


def test_uninstall_removes_the_service_and_keeps_the_journal_unless_purged(tmp_path: Path) -> None:
    source, root = checkout(tmp_path), tmp_path / "root"
    assert install(source, root).returncode == 0
    journal = root / "var/lib/companion/journal.db"
    journal.parent.mkdir(parents=True)
    journal.write_bytes(b"the game")
    env = {**os.environ, "DESTDIR": str(root)}

    result = subprocess.run(["bash", str(UNINSTALL)], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    planned = commands(result.stdout)
    assert planned[0] == "systemctl disable --now companion"  # stopped before anything goes
    assert "udevadm control --reload-rules" in planned
    gone_files = [
        "etc/systemd/system/companion.service",
        "opt/companion",
        "etc/udev/rules.d/60-test-reader.rules",
        "etc/modprobe.d/blacklist-test.conf",
        "usr/local/bin/companion",
        "etc/polkit-1/rules.d/50-companion-poweroff.rules",
        "etc/polkit-1/rules.d/50-companion-network.rules",
        "etc/NetworkManager/dnsmasq-shared.d/companion.conf",
        "etc/NetworkManager/dispatcher.d/90-companion-hotspot",
    ]
    for gone in gone_files:
        assert not (root / gone).exists() and not (root / gone).is_symlink(), gone
    assert journal.read_bytes() == b"the game" and (root / "etc/companion/companion.toml").exists()
    assert "userdel companion" not in planned

    purged = subprocess.run(
        ["bash", str(UNINSTALL), "--purge"], capture_output=True, text=True, timeout=60, env=env
    )
    assert purged.returncode == 0, purged.stderr
    assert not journal.exists() and not (root / "etc/companion").exists()
    assert "userdel companion" in commands(purged.stdout)


def test_the_installer_refuses_a_bad_port_and_unknown_options(tmp_path: Path) -> None:
    source, root = checkout(tmp_path, rules=False), tmp_path / "root"
    assert install(source, root, "--port", "eighty").returncode == 2
    assert install(source, root, "--frobnicate").returncode == 2
    assert not (root / "etc").exists()


def test_shellcheck_passes_on_the_scripts() -> None:
    shellcheck = need("shellcheck", "shellcheck", required_in_ci=False)  # a lint: optional
    result = subprocess.run(
        [shellcheck, str(INSTALL), str(UNINSTALL)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout


# companion url


def test_url_prints_the_scoreboard_address_and_a_qr_code(tmp_path: Path) -> None:
    config = tmp_path / "companion.toml"
    config.write_text('[server]\nport = 8123\ntoken = "secret-token"\n')
    run = [sys.executable, "-m", "companion.appliance.cli", "url", "--config", str(config)]
    plain = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0
    addresses = [line.strip() for line in plain.stdout.splitlines() if line.startswith("  http://")]
    assert addresses and all(a.endswith(":8123/") for a in addresses)
    assert addresses[-1] == f"http://{socket.gethostname()}.local:8123/"
    assert "▀" in plain.stdout or "▄" in plain.stdout or "█" in plain.stdout  # the QR code
    assert "secret-token" not in plain.stdout  # the tablet's address, not the control page

    control = subprocess.run([*run, "--control", "--no-qr"], capture_output=True, text=True, timeout=60)
    assert "/control#token=secret-token" in control.stdout and "█" not in control.stdout


def test_the_watchdog_goes_quiet_while_the_web_server_is_wedged(
    daemon: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: the watchdog checked only the table and the journal, so a web server that no longer
    answered (every connection taken) was never restarted. Now it makes a real request."""
    from companion.webapp.server import build_server

    server = build_server(daemon.app, "127.0.0.1", 0, streams=2)
    threading.Thread(target=server.run, daemon=True).start()
    wedged = socket.socket()  # listens, so connections open, but nobody ever answers them
    wedged.bind(("127.0.0.1", 0))
    wedged.listen(8)
    target = [("127.0.0.1", server.effective_port)]
    monkeypatch.setattr("companion.appliance.systemd.PROBE_SECONDS", 0.2)
    listener = NotifySocket(str(tmp_path / "wd.sock"))
    watchdog = Watchdog(Notifier(str(tmp_path / "wd.sock")), 0.05, lambda: daemon_alive(daemon, target[0]))
    watchdog.start()
    try:
        assert len(listener.drain(0.5)) >= 3  # the server answers: pings
        target[0] = wedged.getsockname()
        listener.drain(0.3)  # a ping already under way may still arrive
        assert listener.drain(0.8) == []  # wedged: silence, so systemd restarts us
    finally:
        watchdog.stop()
        listener.close()
        wedged.close()
        server.close()


def test_the_installer_adds_the_board_readers_libraries_when_asked_or_configured(tmp_path: Path) -> None:
    source, root = checkout(tmp_path), tmp_path / "root"

    def pip_install(*args: str) -> str:
        result = install(source, root, *args)
        assert result.returncode == 0, result.stderr
        [line] = [c for c in commands(result.stdout) if " install " in c and "/bin/pip" in c]
        return shlex.split(line)[-1]  # what pip installs

    assert pip_install() == str(source)  # no extra
    assert pip_install("--rc522") == f"{source}[rc522]"
    assert pip_install("--pn532", "--rc522") == f"{source}[pn532,rc522]"
    config = root / "etc/companion/companion.toml"
    config.write_text(config.read_text().replace('device = "auto"', 'device = "rc522:spi0.0"'))
    assert 'device = "rc522:spi0.0"' in config.read_text()
    assert pip_install() == f"{source}[rc522]"  # the config names one
