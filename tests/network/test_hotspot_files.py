"""The files the Pi needs around the hotspot (systemd/): the dnsmasq names that bring the phones'
probes to the table, and the NetworkManager dispatcher script that sends port 80 to the
scoreboard while the access point is up, run here with its `nft` recorded and the ruleset checked
by Debian's nft (`nft -c`: parsed and checked, not applied)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from companion.network.nm import OWN_UUID
from companion.network.wifi import SHARED_ADDRESS
from tests.network.test_probes import HOSTS

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
DISPATCHER = SYSTEMD / "companion-hotspot-dispatcher"


def test_every_probe_name_resolves_to_the_table() -> None:
    lines = (SYSTEMD / "companion-hotspot-dnsmasq.conf").read_text().splitlines()
    named = {m[1]: m[2] for line in lines if (m := re.fullmatch(r"address=/([^/]+)/(.+)", line))}
    assert set(HOSTS.values()) <= set(named) and set(named.values()) == {SHARED_ADDRESS}


def run_dispatcher(tmp_path: Path, uuid: str, action: str) -> str | None:
    """Run the script as NetworkManager would; what it piped to (or asked of) nft, or None."""
    record = tmp_path / "nft-called"
    fake = tmp_path / "bin" / "nft"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f'#!/bin/sh\n{{ echo "args: $*"; cat; }} > {record}\n')
    fake.chmod(0o755)
    record.unlink(missing_ok=True)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "CONNECTION_UUID": uuid}
    subprocess.run(
        ["sh", str(DISPATCHER), "wlan0", action], env=env, check=True, timeout=10, stdin=subprocess.DEVNULL
    )
    return record.read_text() if record.exists() else None


def test_the_dispatcher_acts_for_the_companions_profile_only(tmp_path: Path) -> None:
    assert f"OWN_UUID={OWN_UUID}\n" in DISPATCHER.read_text()
    assert run_dispatcher(tmp_path, "11111111-2222-3333-4444-555555555555", "up") is None
    up = run_dispatcher(tmp_path, OWN_UUID, "up")
    assert up is not None and up.startswith("args: -f -\n")
    ruleset = up.removeprefix("args: -f -\n")
    assert 'iifname "wlan0" tcp dport 80 redirect to :8000' in ruleset
    assert run_dispatcher(tmp_path, OWN_UUID, "down") == "args: delete table ip companion_hotspot\n"
    nft = shutil.which("nft") or ("/usr/sbin/nft" if Path("/usr/sbin/nft").exists() else None)
    if nft is None:
        pytest.skip("nft is not installed (apt install nftables; ./scripts/test does): ruleset not checked")
    rules = tmp_path / "rules.nft"
    rules.write_text(ruleset)
    checked = subprocess.run([nft, "-c", "-f", str(rules)], capture_output=True, text=True, timeout=10)
    assert checked.returncode == 0, checked.stderr


def test_shellcheck_passes_on_the_dispatcher() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (./scripts/test installs it)")
    done = subprocess.run([shellcheck, str(DISPATCHER)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout
