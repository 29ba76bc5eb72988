"""Pairing a control device, so the control token never crosses the table's Wi-Fi (issue 13).

The host runs `companion pair` on the Pi (or reads the system log): the daemon makes a 6-digit code,
valid for 5 minutes and 5 tries, used once. Typed into /pair on the phone, it sets a cookie
(`HttpOnly; SameSite=Strict`) holding a random secret for that device alone. Control calls take
that cookie instead of the token; the token itself stays on the Pi (the config file, loopback
calls, scripts). Only SHA-256 digests of the device secrets are kept, in `paired-devices.json`
beside the journal, so the devices stay paired across restarts. See docs/architecture.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any

from companion.table.disk import sync_directory

log = logging.getLogger(__name__)

COOKIE = "companion_device"
CODE_SECONDS = 300
CODE_TRIES = 5
MAX_DEVICES = 32
COOKIE_SECONDS = 400 * 24 * 3600  # browsers cap a cookie's life at 400 days


class PairingError(Exception):
    """The paired devices could not be saved: the pairing (or the unpairing) did not happen."""


class Pairing:
    """The current pairing code and the paired devices' secrets (as digests)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._code: str | None = None
        self._expires = 0.0
        self._tries = 0
        self._devices: list[dict[str, Any]] = self._load()

    def new_code(self) -> str:
        """A fresh code (the previous one stops working); logged, so the Pi's side can show it."""
        with self._lock:
            self._code = f"{secrets.randbelow(10**6):06d}"
            self._expires = time.monotonic() + CODE_SECONDS
            self._tries = 0
            code = self._code
        log.warning(
            "pairing code for a control device: %s (valid %d minutes, once)", code, CODE_SECONDS // 60
        )
        return code

    def pair(self, code: str) -> str | None:
        """The new device's secret if `code` is the current code, else None (and one try fewer)."""
        with self._lock:
            current = self._code
            if current is None or time.monotonic() > self._expires:
                self._code = None
                return None
            if not hmac.compare_digest(code.strip().replace(" ", "").encode(), current.encode()):
                self._tries += 1
                if self._tries >= CODE_TRIES:
                    self._code = None
                    log.warning("pairing code withdrawn after %d wrong tries", CODE_TRIES)
                return None
            secret = secrets.token_urlsafe(32)
            devices = [*self._devices, {"digest": _digest(secret), "paired_at": int(time.time())}]
            self._save(devices[-MAX_DEVICES:])  # on disk first: a pairing answered must outlive a restart
            self._code = None
        log.warning("a control device was paired (%d paired)", len(self._devices))
        return secret

    @property
    def wrong_tries(self) -> int:
        """Wrong codes typed since the current code was made (at CODE_TRIES it is withdrawn)."""
        with self._lock:
            return self._tries

    def knows(self, secret: str | None) -> bool:
        if not secret:
            return False
        digest = _digest(secret)
        with self._lock:
            return any(hmac.compare_digest(device["digest"], digest) for device in self._devices)

    def forget_all(self) -> int:
        with self._lock:
            count = len(self._devices)
            self._save([])
        return count

    def _load(self) -> list[dict[str, Any]]:
        if self.path is None or not self.path.exists():
            return []
        try:
            devices = json.loads(self.path.read_text(encoding="utf-8"))["devices"]
            return [d for d in devices if isinstance(d, dict) and isinstance(d.get("digest"), str)]
        except (OSError, ValueError, KeyError, TypeError) as error:
            log.error("cannot read the paired devices in %s (%s): pair them again", self.path, error)
            return []

    def _save(self, devices: list[dict[str, Any]]) -> None:
        """Make `devices` the paired ones, on disk first; PairingError (nothing changed) if the disk
        fails. A failed sync may still have put the new file in place: after a restart it holds
        either list, never a torn one."""
        if self.path is not None:
            try:  # the new file whole on disk, then its name: a power cut leaves the old file or the new
                temporary = self.path.with_suffix(".tmp")
                with open(temporary, "w", encoding="utf-8") as file:
                    os.fchmod(file.fileno(), 0o600)
                    file.write(json.dumps({"devices": devices}))
                    file.flush()
                    os.fsync(file.fileno())
                temporary.replace(self.path)
                sync_directory(self.path.parent)
            except OSError as error:
                log.error("cannot save the paired devices in %s: %s", self.path, error)
                raise PairingError(
                    f"The table could not save the paired devices ({error.strerror or error}); nothing "
                    "changed. Check the disk, then try again."
                ) from error
        self._devices = devices


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
