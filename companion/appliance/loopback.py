"""Asking the running daemon, on this machine, with the control token: the commands that steer
what only the daemon holds (`companion pair`, `companion hotspot`) go through its own API."""

from __future__ import annotations

import http.client
import json
from typing import Any


def ask_daemon(
    method: str, path: str, port: int, token: str, body: dict[str, Any] | None = None, timeout: float = 10
) -> dict[str, Any]:
    """The daemon's JSON answer to `method path` on 127.0.0.1:`port`; its error as an OSError (a 4xx
    or 5xx), as is a daemon that does not answer."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Authorization": f"Bearer {token}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        answer = json.loads(response.read() or b"{}")
    finally:
        connection.close()
    if response.status >= 400:
        raise OSError(answer.get("error", f"HTTP {response.status}"))
    return answer  # type: ignore[no-any-return]
