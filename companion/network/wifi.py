"""The access point's credentials: the Wi-Fi QR code's text, and the password generated once and kept
in `network.json` beside the journal (the service may write only there; the config file is root's)."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from companion.core.config import Config, NetworkSettings

# No 0/O, 1/l/I: the password may have to be typed from the control page by someone at the table.
_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
PASSWORD_LENGTH = 12  # 60 bits: well beyond what an attacker near the table can try against WPA2
SHARED_ADDRESS = "10.42.0.1"  # NetworkManager's own address on a "shared" (access point) network


def wifi_qr_text(ssid: str, password: str) -> str:
    """What a phone's camera joins: `WIFI:T:WPA;S:<ssid>;P:<password>;;`, with `\\ ; , : "` escaped
    by a backslash (the format's own rule; the backslash first, so no escape is escaped twice)."""
    return f"WIFI:T:WPA;S:{_escape(ssid)};P:{_escape(password)};;"


def _escape(text: str) -> str:
    for char in '\\;,:"':
        text = text.replace(char, "\\" + char)
    return text


def state_path(config: Config) -> Path:
    """network.json, beside the journal."""
    return config.db.parent / "network.json"


def hotspot_password(settings: NetworkSettings, path: Path) -> str:
    """The configured password, else the one kept in `path`, else a new one written there first."""
    if settings.password:
        return settings.password
    try:
        stored = json.loads(path.read_text(encoding="utf-8")).get("password")
    except FileNotFoundError:
        stored = None
    except (OSError, ValueError, AttributeError) as error:
        raise OSError(f"{path}: cannot read the hotspot's password ({error}): move the file away") from error
    if isinstance(stored, str) and 8 <= len(stored) <= 63:
        return stored
    password = "".join(secrets.choice(_ALPHABET) for _ in range(PASSWORD_LENGTH))
    _write_private(path, {"password": password})
    return password


def _write_private(path: Path, data: dict[str, str]) -> None:
    """Write `data` whole or not at all, readable by its owner only. Written by root (`sudo companion
    url` before the service ever ran), it is handed to the folder's owner, the service's user."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    descriptor = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        json.dump(data, file)
        file.flush()
        os.fsync(file.fileno())
    if os.geteuid() == 0:
        folder = path.parent.stat()
        os.chown(part, folder.st_uid, folder.st_gid)
    os.replace(part, path)
