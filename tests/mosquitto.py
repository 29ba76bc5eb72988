"""A real Mosquitto broker on a free loopback port, and a subscriber that records what it hears.

Debian's `mosquitto` (scripts/test installs it); the tests that need it skip without it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho

from tests.servers import free_port

MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")


class Broker:
    """`mosquitto -c <generated config>`: anonymous, loopback only, persistent sessions kept in
    `folder` (as a club's broker would keep them across a restart)."""

    def __init__(self, folder: Path) -> None:
        assert MOSQUITTO, "mosquitto is not installed"
        self.folder = folder
        self.port = free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self.config = folder / "mosquitto.conf"
        folder.mkdir(parents=True, exist_ok=True)
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            "persistence true\n"
            f"persistence_location {folder}/\n"
            f"log_dest file {folder}/mosquitto.log\n" + ("user root\n" if os.geteuid() == 0 else "")
            # As root, mosquitto would switch to the user "mosquitto", who cannot write here.
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([MOSQUITTO, "-c", str(self.config)])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on {self.port}")

    def stop(self) -> None:
        """A clean stop: mosquitto saves its sessions (the league's queued results) first."""
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=10)
            self.process = None


@dataclass
class Message:
    topic: str
    payload: bytes
    retain: bool
    qos: int

    def json(self) -> Any:
        return json.loads(self.payload)


class Listener:
    """A subscriber that keeps every message on `topics`, in order."""

    def __init__(self, broker: Broker, *topics: str, persistent: bool = False) -> None:
        """`persistent`: a session the broker keeps while the subscriber is away (a broker restart),
        queueing what it would have heard (QoS 1)."""
        self.messages: list[Message] = []
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = paho.Client(
            paho.CallbackAPIVersion.VERSION2, client_id=f"test-{id(self)}", clean_session=not persistent
        )
        self.client.on_connect = lambda c, u, f, r, p: c.subscribe([(t, 1) for t in topics])
        self.client.on_subscribe = lambda *args: self._subscribed.set()
        self.client.on_message = self._keep
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)  # back soon after a broker restart
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        assert self._subscribed.wait(5), "the test subscriber could not subscribe"

    def _keep(self, client: Any, userdata: Any, message: Any) -> None:
        with self._lock:
            self.messages.append(Message(message.topic, message.payload, bool(message.retain), message.qos))

    def on(self, topic: str) -> list[Message]:
        with self._lock:
            return [m for m in self.messages if m.topic == topic]

    def on_prefix(self, prefix: str) -> list[Message]:
        with self._lock:
            return [m for m in self.messages if m.topic.startswith(prefix)]

    def wait(self, check: Callable[[], Any], timeout: float = 15.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"not heard within {timeout} s; heard: {[m.topic for m in self.messages][-20:]}")

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
