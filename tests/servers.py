"""A real `companion run` in a subprocess, for tests that need a real server (browser, SSE, signals)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TOKEN = "browser-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        # The daemon's output, read as it comes: a pipe nobody reads fills up (64 KiB) and then blocks
        # the daemon's next log line, and whichever request was logging with it.
        self.output: deque[str] = deque(maxlen=400)
        self._reader = threading.Thread(target=self._read_output, daemon=True)
        self._reader.start()

    def _read_output(self) -> None:
        if self.process.stdout is not None:
            for line in self.process.stdout:
                self.output.append(line)

    def printed(self) -> str:
        """The daemon's last 400 lines of output, once it has stopped."""
        self._reader.join(timeout=5)
        return "".join(self.output)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        request.add_header("Authorization", f"Bearer {TOKEN}")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)


def run_arguments(port: int, db: Path) -> list[str]:
    """`companion run` on loopback with mock pins: the arguments after the program."""
    return ["run", "--mock-pins", "--host", "127.0.0.1", "--port", str(port), "--db", str(db)]


@contextmanager
def running_companion(
    db: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, port: int | None = None
) -> Iterator[Server]:
    """Start `companion run` on `port` (default: a free one), with `env` added to the environment, and
    wait until /healthz answers."""
    port = port or free_port()
    env = {**os.environ, "COMPANION_TOKEN": TOKEN, **(env or {})}
    command = [sys.executable, "-m", "companion.appliance.cli", *run_arguments(port, db), *args]
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    server = Server(process, port)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(server.url + "/healthz", timeout=1):
                    break
            except (urllib.error.URLError, ConnectionError):
                if process.poll() is not None or time.monotonic() > deadline:
                    if process.poll() is None:
                        process.kill()
                    process.wait()
                    raise RuntimeError(f"companion did not start:\n{server.printed()}") from None
                time.sleep(0.1)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
