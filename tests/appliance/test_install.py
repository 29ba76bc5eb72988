"""The installer over an installed table (issue 26): Raspberry Pi OS's gpiozero and lgpio from apt,
and an upgrade in place that keeps the journal, its archive, the card registry, the outbox, the
paired devices and the config, restarts the service once and leaves doctor clean.

The upgrade runs for real into a scratch prefix (`DESTDIR` with `--venv`: the venv is made and the
package pip-installed under it, twice, the second time a newer version); the system commands
(useradd, systemctl, udevadm) are only planned, as in every dry run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from companion.mqtt.outbox import Outbox
from companion.readers.registry import Registry
from companion.table.journal import Journal
from tests.appliance.test_service import ROOT, checkout, commands
from tests.servers import free_port


def install(
    source: Path, root: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(source / "systemd" / "install.sh"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "DESTDIR": str(root), **(env or {})},
    )


def pi(tmp_path: Path, model: str, os_id: str = "debian") -> dict[str, str]:
    """What the installer reads to tell Raspberry Pi OS on a Pi: a device tree's model, os-release."""
    (tmp_path / "model").write_bytes(model.encode() + b"\0")  # the device tree's string ends in NUL
    (tmp_path / "os-release").write_text(f"ID={os_id}\nVERSION_CODENAME=bookworm\n")
    return {
        "COMPANION_DT_MODEL": str(tmp_path / "model"),
        "COMPANION_OS_RELEASE": str(tmp_path / "os-release"),
    }


def test_on_raspberry_pi_os_gpiozero_and_lgpio_come_from_apt(tmp_path: Path) -> None:
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        pytest.skip("no apt here: the installer's apt step is skipped")
    source, root = checkout(tmp_path), tmp_path / "root"
    on_pi = install(source, root, env=pi(tmp_path, "Raspberry Pi 5 Model B Rev 1.0"))
    assert on_pi.returncode == 0, on_pi.stderr
    planned = commands(on_pi.stdout)
    installed = subprocess.run(["dpkg", "-s", "python3-gpiozero"], capture_output=True).returncode == 0
    [apt] = [c for c in planned if c.startswith("apt-get install")] or [""]
    assert installed or "python3-gpiozero" in apt.split()
    assert "python3 -m venv --system-site-packages /opt/companion" in planned  # the venv sees apt's
    # PyPI's copy from an earlier install would hide apt's; pip keeps a dependency it finds satisfied.
    assert "/opt/companion/bin/pip uninstall --yes --quiet gpiozero lgpio" in planned
    assert any("--upgrade-strategy only-if-needed" in c for c in planned)
    assert "gpiozero and lgpio from apt" in on_pi.stdout

    for model, os_id in (("Some Other Board", "debian"), ("Raspberry Pi 4 Model B", "fedora")):
        shutil.rmtree(root)
        other = install(source, root, env=pi(tmp_path, model, os_id))
        assert other.returncode == 0, other.stderr
        assert not any("gpiozero" in c for c in commands(other.stdout)), model


def digests(folder: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.iterdir())}


def installed_table(state: Path) -> None:
    """What a table that has played holds: a game in the journal, finished games in the archive,
    an enrolled tag, a result in the outbox, a paired device."""
    journal = Journal(state / "journal.db")
    for players in (["Ann", "Bob"], ["Cy", "Di"], ["Ed", "Flo"]):
        seq = journal.append({"type": "start", "game": "spy", "players": players}, "2026-12-02T04:00:00")
        journal.archive(before=seq)  # the games before this one, as the table does at a start
    journal.close()
    registry = Registry(state / "cards.db")
    registry.register("04a1b2c3", "spy/red-spy")
    registry.close()
    outbox = Outbox(state / "outbox.db")
    outbox.put([{"id": "t/g#1/game", "game_id": "g#1", "kind": "game"}])
    outbox.close()
    (state / "paired-devices.json").write_text(
        json.dumps({"devices": [{"digest": "ab" * 32, "paired_at": 1}]})
    )


def project(tmp_path: Path, version: str) -> Path:
    """A copy of the checkout that pip can install, at `version`."""
    source = checkout(tmp_path / version)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("companion", "web", "seeds"):
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    shutil.copy2(ROOT / "README.md", source / "README.md")
    text = (ROOT / "pyproject.toml").read_text()
    (source / "pyproject.toml").write_text(text.replace('version = "0.1.0"', f'version = "{version}"', 1))
    return source


def test_installing_again_upgrades_the_table_in_place(tmp_path: Path) -> None:
    root = tmp_path / "root"
    first = install(project(tmp_path, "0.1.0"), root, "--no-apt", "--venv")
    assert first.returncode == 0, first.stderr
    python = root / "opt/companion/bin/python"
    state = root / "var/lib/companion"
    state.mkdir(parents=True)
    installed_table(state)
    config = root / "etc/companion/companion.toml"
    config.write_text(config.read_text() + "\n# the host's own note\n")
    before, config_before = digests(state), config.read_text()
    assert {"journal.db", "journal-archive.db", "cards.db", "outbox.db", "paired-devices.json"} <= set(before)

    again = install(project(tmp_path, "0.1.1"), root, "--no-apt", "--venv")
    assert again.returncode == 0, again.stderr
    planned = commands(again.stdout)
    assert digests(state) == before  # every file of the table, byte for byte
    assert config.read_text() == config_before and "kept the existing config" in again.stdout
    assert planned.count("systemctl restart companion") == 1
    assert not any(c.startswith(("systemctl stop", "systemctl start")) for c in planned)
    version = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('table-companion'))"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert version.stdout.strip() == "0.1.1", version.stderr

    doctor = subprocess.run(
        [str(root / "opt/companion/bin/companion"), "doctor", "--config", str(config),
         "--db", str(state / "journal.db"), "--port", str(free_port())],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert doctor.returncode == 0 and "FAIL" not in doctor.stdout, doctor.stdout + doctor.stderr
    assert "ok   journal:" in doctor.stdout, doctor.stdout
