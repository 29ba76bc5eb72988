"""The watcher: every few seconds it looks at NetworkManager, hands what it saw to the rules
(companion.network.rules) and carries out what they answer (companion.network.nm). The daemon runs
one; the web side asks it whether the access point is up (the connectivity probes, the Host guard),
for the credentials (the control page's QR code) and to change its hold (`companion hotspot`)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.core.config import NetworkSettings
from companion.network.nm import ACTIVATED, OWN_UUID, NetworkManager, NetworkManagerError
from companion.network.rules import Action, HotspotRules, Seen
from companion.network.wifi import hotspot_password, wifi_qr_text

log = logging.getLogger(__name__)
TICK = 3.0  # seconds between looks
ARP = Path("/proc/net/arp")
TIMEOUT_JOIN = 15.0  # seconds close() waits for a look in progress (D-Bus calls time out at 10 s)


class Hotspot:
    """The table's access point, watched and raised or dropped by the rules. `connect` opens the
    adapter (each look opens its own connection: a restarted NetworkManager or D-Bus is no matter),
    `clock` gives seconds, `arp` is the kernel's neighbour table, where the phones on the access point
    show up."""

    def __init__(
        self,
        settings: NetworkSettings,
        state: Path,
        connect: Callable[[str], NetworkManager] = NetworkManager.system,
        clock: Callable[[], float] = time.monotonic,
        arp: Path = ARP,
    ) -> None:
        self.settings = settings
        self.password = hotspot_password(settings, state)
        self._connect = connect
        self._clock = clock
        self._arp = arp
        self.rules = HotspotRules(settings.hotspot, settings.wait, settings.scan_every, clock())
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen = Seen(connected=False, hotspot=False)
        self.error: str | None = None  # why the last look failed, or None

    @property
    def ssid(self) -> str:
        return self.settings.name

    @property
    def up(self) -> bool:
        """Whether the access point was up at the last look."""
        return self._seen.hotspot

    def qr_text(self) -> str:
        return wifi_qr_text(self.ssid, self.password)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="hotspot", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=TIMEOUT_JOIN)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.tick()
            self._stop.wait(TICK)

    def tick(self) -> list[Action]:
        """One look and what the rules made of it (done, in order)."""
        with self._lock:
            try:
                manager = self._connect(self.settings.interface)
            except NetworkManagerError as error:
                return self._failed(error)
            try:
                return self._look(manager)
            except NetworkManagerError as error:
                return self._failed(error)
            finally:
                manager.close()

    def _look(self, manager: NetworkManager) -> list[Action]:
        now = self._clock()
        seen = self._see(manager)
        if self.rules.scan_due(now, seen):
            known, visible = manager.known_wifi(), manager.visible()
            in_sight = sorted(uuid for ssid, uuid in known.items() if ssid in visible)
            first = in_sight[0] if in_sight else None
            seen = Seen(seen.connected, seen.hotspot, first, scanned=True, clients=self.clients())
        actions = self.rules.step(now, seen)
        for action in actions:
            log.info("hotspot: %s%s", action.kind, f" {action.profile}" if action.profile else "")
            if action.kind == "raise":
                manager.raise_ap(self.ssid, self.password)
            elif action.kind == "drop":
                manager.drop_ap()
            elif action.kind == "join" and action.profile:
                manager.join(action.profile)
        self._seen = self._see(manager) if actions else seen
        self.error = None
        return actions

    def _see(self, manager: NetworkManager) -> Seen:
        active = manager.active()
        hotspot = any(a.uuid == OWN_UUID for a in active)
        connected = any(a.uuid != OWN_UUID and a.state == ACTIVATED for a in active)
        return Seen(connected=connected, hotspot=hotspot)

    def _failed(self, error: NetworkManagerError) -> list[Action]:
        if str(error) != self.error:  # once per new reason, not every few seconds
            log.warning("hotspot: %s", error)
        self.error = str(error)
        return []

    def command(self, hold: str) -> dict[str, Any]:
        """`companion hotspot on|off|auto`: the new hold, carried out at once; the status after it."""
        with self._lock:
            self.rules.command(hold, self._clock())
        self.tick()
        return self.status()

    def status(self) -> dict[str, Any]:
        """The mode ("hotspot", "client" or "off": neither), the hold, the SSID and the clients."""
        seen = self._seen
        mode = "hotspot" if seen.hotspot else "client" if seen.connected else "off"
        waiting = self.rules.waiting(self._clock())
        return {
            "mode": mode,
            "hold": self.rules.hold,
            "ssid": self.ssid,
            "clients": self.clients() if seen.hotspot else 0,
            "raises_in": None if waiting is None or mode != "off" else round(waiting),
            "error": self.error,
        }

    def clients(self) -> int:
        """The phones the access point has: complete entries of the kernel's neighbour table on its
        interface (NetworkManager lists no stations over D-Bus; its DHCP server's leases outlive them)."""
        try:
            lines = self._arp.read_text().splitlines()[1:]
        except OSError:
            return 0
        # IP address, HW type, Flags, HW address, Mask, Device; flags 0x2: a live entry
        return sum(
            1
            for line in lines
            if len(fields := line.split()) >= 6
            and fields[5] == self.settings.interface
            and fields[2] == "0x2"
        )
