"""A real Home Assistant core on a free loopback port, set up offline for the tests' broker.

`homeassistant==2024.3.3` (the newest release on Python 3.11, Debian 12's and Raspberry Pi OS
bookworm's) with the `paho-mqtt==1.6.1` its MQTT integration requires, in a venv of its own that
scripts/test builds once (scripts/ha-venv.sh) and marks ready; the tests that need it skip without it.

Home Assistant is configured before its first start as a user who had set it up would have left
it, so it needs no network, no onboarding and no pip: `configuration.yaml` loads only `http`, `api`,
`websocket_api` and `config`; `.storage/auth` holds an owner with a long-lived access token, and
`.storage/core.config_entries` the MQTT integration's entry for the broker (what its config flow
stores), in the formats Home Assistant 2024.3 loads (homeassistant/auth/auth_store.py and
config_entries.py). Its log is `home-assistant.log` in the config folder.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import websocket

from tests.servers import free_port

HA_VERSION = "2024.3.3"
_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
HA_VENV = Path(os.environ.get("COMPANION_HA_VENV") or _cache / "companion-tests" / f"ha-{HA_VERSION}")
# scripts/ha-venv.sh writes `.ready` last, so a venv whose install broke off is never used.
HA_PYTHON = HA_VENV / "bin" / "python" if (HA_VENV / ".ready").exists() else None
SKIP_REASON = f"needs Home Assistant {HA_VERSION} in {HA_VENV} (scripts/test builds it: scripts/ha-venv.sh)"
TEN_YEARS = 10 * 365 * 24 * 3600

CONFIGURATION = """\
homeassistant:
  name: Companion tests
  latitude: 52.52
  longitude: 13.40
  elevation: 34
  unit_system: metric
  time_zone: UTC
  country: DE
  currency: EUR
http:
  server_host: 127.0.0.1
  server_port: {port}
api:
websocket_api:
config:
"""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def access_token(refresh_token_id: str, jwt_key: str, now: int) -> str:
    """An HS256 JWT as Home Assistant's auth makes one (auth/__init__.py, async_create_access_token)."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = _b64(json.dumps({"iss": refresh_token_id, "iat": now, "exp": now + TEN_YEARS}).encode())
    signature = hmac.new(jwt_key.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{_b64(signature)}"


def _storage(key: str, data: dict[str, Any]) -> str:
    return json.dumps({"version": 1, "minor_version": 1, "key": key, "data": data}, indent=2)


class HomeAssistant:
    """`python -m homeassistant --config <folder> --skip-pip`, and its REST and websocket APIs."""

    def __init__(self, folder: Path, broker_port: int) -> None:
        assert HA_PYTHON, SKIP_REASON
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_file = folder / "home-assistant.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.token = self._configure(broker_port)

    def _configure(self, broker_port: int) -> str:
        storage = self.folder / ".storage"
        storage.mkdir(parents=True, exist_ok=True)
        (self.folder / "configuration.yaml").write_text(CONFIGURATION.format(port=self.port))
        user, token_id, jwt_key = secrets.token_hex(16), secrets.token_hex(16), secrets.token_hex(64)
        refresh_token = {
            "id": token_id,
            "user_id": user,
            "client_id": None,
            "client_name": "companion tests",
            "client_icon": None,
            "token_type": "long_lived_access_token",
            "created_at": datetime.now(UTC).isoformat(),
            "access_token_expiration": TEN_YEARS,
            "token": secrets.token_hex(64),
            "jwt_key": jwt_key,
            "last_used_at": None,
            "last_used_ip": None,
            "expire_at": None,
            "version": HA_VERSION,
        }
        owner = {"id": user, "group_ids": ["system-admin"], "is_owner": True, "is_active": True}
        owner |= {"name": "Owner", "system_generated": False, "local_only": False}
        auth = {"users": [owner], "groups": [{"id": "system-admin"}], "credentials": []}
        (storage / "auth").write_text(_storage("auth", auth | {"refresh_tokens": [refresh_token]}))
        entry = {
            "entry_id": secrets.token_hex(16),
            "version": 1,
            "minor_version": 1,
            "domain": "mqtt",
            "title": "127.0.0.1",
            "data": {"broker": "127.0.0.1", "port": broker_port, "discovery": True},
            "options": {},
            "pref_disable_new_entities": False,
            "pref_disable_polling": False,
            "source": "user",
            "unique_id": None,
            "disabled_by": None,
        }
        (storage / "core.config_entries").write_text(_storage("core.config_entries", {"entries": [entry]}))
        return access_token(token_id, jwt_key, int(time.time()))

    def start(self, timeout: float = 90.0) -> None:
        """Start it and wait until its MQTT integration is set up (it then connects on its own)."""
        assert HA_PYTHON
        command = [str(HA_PYTHON), "-m", "homeassistant", "--config", str(self.folder), "--skip-pip"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"Home Assistant exited ({self.process.returncode}):\n{self.log()[-4000:]}"
                )
            try:
                if "mqtt" in self.get("/api/config")["components"]:
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"Home Assistant did not set up MQTT within {timeout} s:\n{self.log()[-4000:]}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def get(self, path: str) -> Any:
        """GET on the REST API (/api/...), as JSON."""
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def states(self) -> dict[str, dict[str, Any]]:
        """/api/states, by entity id."""
        return {state["entity_id"]: state for state in self.get("/api/states")}

    def command(self, kind: str, **fields: Any) -> Any:
        """One websocket API command (its own connection): its result, or AssertionError."""
        ws = websocket.create_connection(f"ws://127.0.0.1:{self.port}/api/websocket", timeout=10)
        try:
            assert json.loads(ws.recv())["type"] == "auth_required"
            ws.send(json.dumps({"type": "auth", "access_token": self.token}))
            assert json.loads(ws.recv())["type"] == "auth_ok", "Home Assistant refused the token"
            ws.send(json.dumps({"id": 1, "type": kind, **fields}))
            answer = json.loads(ws.recv())
        finally:
            ws.close()
        assert answer["success"], answer
        return answer["result"]

    def wait(self, check: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
        """Poll `check` until it returns something true; AssertionError naming `what` after `timeout`."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            try:
                value = check()
            except (OSError, urllib.error.HTTPError):
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"Home Assistant: not {what} within {timeout} s (last: {value!r})")
