"""A plain (not editable) install carries the pages and the game data, and serves them from any folder."""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

from tests.servers import free_port, run_arguments

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_installs_and_serves_its_pages_from_another_folder(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT)],
        check=True,
    )
    wheel = next((tmp_path / "dist").glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in (
        "companion/web/scoreboard.html",
        "companion/web/js/common.js",
        "companion/seeds/spy-team.toml",
    ):
        assert shipped in names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    # The dependencies come from the test environment (no download); PYTHONPATH is searched before the
    # new venv's site-packages but holds no `companion` package (the dev install is a path hook), so the
    # package imported below is the installed wheel.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(site.getsitepackages()), "COMPANION_TOKEN": "t"}
    where = subprocess.run(
        [str(python), "-c", "import companion; print(companion.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(venv) in where

    port = free_port()
    server = subprocess.Popen(
        [str(venv / "bin" / "companion"), *run_arguments(port, tmp_path / "j.db")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        for line in server.stdout:  # the daemon prints its URLs once it listens
            if "scoreboard:" in line:
                break
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(base + "/", timeout=5) as page:
            bundle = re.search(rb'src="(/static/bundles/\w+\.js\?v=\w+)"', page.read())
        assert bundle is not None  # the page's scripts, one after another (scoreboard.js last)
        with urllib.request.urlopen(base + bundle.group(1).decode(), timeout=5) as script:
            assert b"The public scoreboard: follows the table live" in script.read()
        with urllib.request.urlopen(base + "/static/js/common.js", timeout=5) as script:
            assert b"registerGame" in script.read()
        with urllib.request.urlopen(base + "/api/games", timeout=5) as games:
            assert b"spy-team/red-17" in games.read()
    finally:
        server.terminate()
        server.wait(timeout=5)
