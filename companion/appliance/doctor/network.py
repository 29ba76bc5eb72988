"""The table's own Wi-Fi ([network], companion.network): the mode (client, hotspot or off: neither),
the access point's SSID and how many phones it has. As a running companion reports it (its watcher
owns the radio), or, with none running, as NetworkManager says, read only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.appliance.doctor.report import Check, ok, warn
from companion.core.config import Config
from companion.network.nm import OWN_UUID, NetworkManager, NetworkManagerError

NM_FIX = (
    "check NetworkManager runs (`systemctl status NetworkManager`; Raspberry Pi OS bookworm has it) "
    "and that the service's user may steer it (systemd/companion-network.rules in /etc/polkit-1/rules.d/)"
)


def check_network(config: Config, health: Mapping[str, Any] | None) -> list[Check]:
    settings = config.network
    if settings is None:
        return [ok("network", "no [network] in the config: the table never raises its own Wi-Fi")]
    if health is not None and isinstance(health.get("network"), dict):
        return [_reported(health["network"])]
    try:
        manager = NetworkManager.system(settings.interface)
        try:
            active = manager.active()
        finally:
            manager.close()
    except NetworkManagerError as error:
        return [warn("network", f"cannot ask NetworkManager: {error}", NM_FIX)]
    if any(a.uuid == OWN_UUID for a in active):
        return [ok("network", f"hotspot: the access point {settings.name} is up (no companion running)")]
    if active:
        names = ", ".join(a.name for a in active)
        return [ok("network", f"client: on {names}; the access point {settings.name} when there is none")]
    return [
        ok("network", f"off: no network yet (hotspot = {settings.hotspot}, access point {settings.name})")
    ]


def _reported(status: Mapping[str, Any]) -> Check:
    """The running companion's own status (GET /healthz, "network")."""
    mode, ssid, hold = status.get("mode"), status.get("ssid"), status.get("hold")
    if status.get("error"):
        return warn("network", f"{mode} (hold {hold}): NetworkManager: {status['error']}", NM_FIX)
    if mode == "hotspot":
        return ok("network", f"hotspot: the access point {ssid} is up, {status.get('clients', 0)} client(s)")
    if mode == "client":
        return ok("network", f"client: on a known network; the access point {ssid} when there is none")
    later = status.get("raises_in")
    when = f", the access point {ssid} goes up in {later} s" if later is not None else ""
    return ok("network", f"off: no network (hold {hold}){when}")
