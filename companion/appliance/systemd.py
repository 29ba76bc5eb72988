"""The few words of systemd's notify protocol the daemon speaks: READY, WATCHDOG, STOPPING, STATUS.

sd_notify(3) is one datagram of "KEY=value" lines sent to the unix socket named in $NOTIFY_SOCKET
(a leading "@" means Linux's abstract namespace). Outside systemd the variable is unset and every
call here does nothing, so `companion run` behaves the same on a laptop.

The watchdog (WatchdogSec= in the unit) is fed from a thread at half the interval systemd asks for,
but only after a probe proves the daemon still works: the table's lock can be taken (an input stuck
on the journal holds it) and the HTTP listener answers a real request on loopback. A daemon stuck
on a lock, a dying SD card or a wedged web server stops feeding it, and systemd restarts it.
"""

from __future__ import annotations

import http.client
import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any

log = logging.getLogger(__name__)
PROBE_SECONDS = 5.0  # the web server's answer to the watchdog's request (WatchdogSec is 30)


class Notifier:
    """Sends notifications to systemd, or nothing when the service manager did not ask for them."""

    def __init__(self, address: str | None) -> None:
        self.address = address or None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Notifier:
        env = os.environ if env is None else env
        return cls(env.get("NOTIFY_SOCKET"))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, *lines: str) -> bool:
        """Send one message (one line per state change); False if it could not be delivered."""
        if self.address is None:
            return False
        # "@name" is an abstract socket: its address starts with a NUL byte instead of the "@".
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.sendto("\n".join(lines).encode(), target)
        except OSError as error:  # never let the service manager's socket stop the table
            log.warning("could not notify systemd at %s: %s", self.address, error)
            return False
        return True


def watchdog_interval(env: Mapping[str, str] | None = None, pid: int | None = None) -> float | None:
    """Seconds between two WATCHDOG=1 pings (half of WATCHDOG_USEC), or None without a watchdog."""
    env = os.environ if env is None else env
    owner = env.get("WATCHDOG_PID")
    if owner and owner.isdigit() and int(owner) != (os.getpid() if pid is None else pid):
        return None  # the watchdog is meant for another process (we were started by the main one)
    usec = env.get("WATCHDOG_USEC", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    return int(usec) / 2 / 1_000_000


class Watchdog:
    """Pings systemd's watchdog every `interval` seconds while `probe()` returns without raising.

    A probe that hangs stops the pings, which is the point: systemd then kills and restarts us."""

    def __init__(self, notifier: Notifier, interval: float, probe: Callable[[], Any]) -> None:
        self.notifier = notifier
        self.interval = interval
        self.probe = probe
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="systemd-watchdog", daemon=True)

    def start(self) -> Watchdog:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.probe()
            except Exception:
                log.exception("watchdog probe failed: not telling systemd we are alive")
                continue
            if not self._stop.is_set():
                self.notifier.notify("WATCHDOG=1")


class Service:
    """The daemon's side of the unit: READY once it serves, the watchdog, STOPPING at shutdown."""

    def __init__(self, notifier: Notifier, watchdog: Watchdog | None = None) -> None:
        self.notifier = notifier
        self.watchdog = watchdog

    @classmethod
    def ready(
        cls,
        daemon: Any,
        status: str,
        env: Mapping[str, str] | None = None,
        listener: tuple[str, int] | None = None,
    ) -> Service:
        """Tell systemd the daemon is up (call once the server listens at `listener`, host and port)
        and start the watchdog."""
        notifier = Notifier.from_env(env)
        interval = watchdog_interval(env)
        watchdog = None
        if notifier.enabled and interval:
            watchdog = Watchdog(notifier, interval, lambda: daemon_alive(daemon, listener)).start()
        notifier.notify("READY=1", f"STATUS={status}")
        return cls(notifier, watchdog)

    def stopping(self) -> None:
        if self.watchdog is not None:
            self.watchdog.stop()
        self.notifier.notify("STOPPING=1", "STATUS=Stopping")


def daemon_alive(daemon: Any, listener: tuple[str, int] | None = None) -> None:
    """Returns only if the table's lock can be taken and (given the server's host and port) the web
    server answers a request; may block forever.

    An input stuck on the journal (a dying SD card) holds the table's lock, so this stops feeding the
    watchdog then. It reads nothing from the disk: the journal's integrity is checked at start-up
    and by `companion doctor`, and a restart would not mend a damaged one."""
    daemon.table.view()  # takes the table's lock
    if listener is not None:
        http_alive(*listener)


def http_alive(host: str, port: int, timeout: float | None = None) -> None:
    """One real request to the HTTP listener, as a tablet makes it; raises unless some answer comes
    within `timeout`. Any status will do: a 503 from /healthz is a server that works."""
    address = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    connection = http.client.HTTPConnection(address, port, timeout=timeout or PROBE_SECONDS)
    try:
        connection.request("GET", "/api/state")
        connection.getresponse().read()
    finally:
        connection.close()
