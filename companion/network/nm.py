"""NetworkManager over its D-Bus API, a thin adapter: what the watcher needs and nothing more.

Through jeepney (pure Python, no build on a Pi) on the system bus, or on the bus that
DBUS_SYSTEM_BUS_ADDRESS names (the tests' private dbus-daemon with python-dbusmock's
NetworkManager template). The access point is a connection profile of its own, found by its fixed
uuid: 802-11-wireless in mode "ap", ipv4 "shared" (NetworkManager's DHCP and DNS for the phones),
WPA2-PSK (RSN, CCMP), never autoconnected (only the watcher raises it). NetworkManager saves it as a
keyfile in /etc/NetworkManager/system-connections/.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass
from typing import Any

from jeepney import DBusAddress, DBusErrorResponse, Properties, new_method_call
from jeepney.io.blocking import DBusConnection, open_dbus_connection
from jeepney.wrappers import unwrap_msg

BUS = "org.freedesktop.NetworkManager"
MANAGER = "/org/freedesktop/NetworkManager"
SETTINGS = "/org/freedesktop/NetworkManager/Settings"
OWN_ID = "companion-hotspot"
OWN_UUID = str(uuid.uuid5(uuid.NAMESPACE_URL, "table-companion:hotspot"))
ACTIVATED = 2  # NMActiveConnectionState
TIMEOUT = 10.0  # seconds for one call: NetworkManager answers at once, activation runs after it


class NetworkManagerError(Exception):
    """NetworkManager is not there or refused a call; the message says which and why."""


@dataclass(frozen=True)
class Active:
    """One of NetworkManager's active connections."""

    path: str
    uuid: str
    name: str
    state: int


class NetworkManager:
    def __init__(self, connection: DBusConnection, interface: str) -> None:
        self._connection = connection
        self.interface = interface

    @classmethod
    def system(cls, interface: str) -> NetworkManager:
        """Connected to the system bus (DBUS_SYSTEM_BUS_ADDRESS, else /var/run/dbus/system_bus_socket)."""
        try:
            return cls(open_dbus_connection(bus="SYSTEM"), interface)
        except (OSError, ValueError) as error:
            raise NetworkManagerError(f"no system D-Bus to reach NetworkManager: {error}") from None

    def close(self) -> None:
        self._connection.close()

    def _call(
        self, path: str, interface: str, method: str, signature: str = "", *body: Any
    ) -> tuple[Any, ...]:
        address = DBusAddress(path, bus_name=BUS, interface=interface)
        try:
            reply = self._connection.send_and_get_reply(
                new_method_call(address, method, signature or None, body), timeout=TIMEOUT
            )
            return tuple(unwrap_msg(reply))
        except DBusErrorResponse as error:
            raise NetworkManagerError(
                f"NetworkManager refused {method}: {error.name}: {error.data}"
            ) from None
        except (OSError, TimeoutError) as error:
            raise NetworkManagerError(f"NetworkManager did not answer {method}: {error!r}") from None

    def _get(self, path: str, interface: str, name: str) -> Any:
        address = DBusAddress(path, bus_name=BUS, interface=interface)
        try:
            reply = self._connection.send_and_get_reply(Properties(address).get(name), timeout=TIMEOUT)
            return unwrap_msg(reply)[0][1]  # a variant: (signature, value)
        except DBusErrorResponse as error:
            raise NetworkManagerError(f"NetworkManager has no {name}: {error.name}: {error.data}") from None
        except (OSError, TimeoutError) as error:
            raise NetworkManagerError(f"NetworkManager did not answer for {name}: {error!r}") from None

    def device(self) -> str:
        """The Wi-Fi device's object path."""
        (path,) = self._call(MANAGER, BUS, "GetDeviceByIpIface", "s", self.interface)
        return str(path)

    def active(self) -> list[Active]:
        """The active connections, each with its uuid, name and state."""
        found = []
        for path in self._get(MANAGER, BUS, "ActiveConnections"):
            iface = f"{BUS}.Connection.Active"
            found.append(
                Active(
                    path,
                    self._get(path, iface, "Uuid"),
                    self._get(path, iface, "Id"),
                    self._get(path, iface, "State"),
                )
            )
        return found

    def _profiles(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Every saved profile's settings (secrets left out), by object path, variants unwrapped."""
        profiles = {}
        for path in self._call(SETTINGS, f"{BUS}.Settings", "ListConnections")[0]:
            (settings,) = self._call(path, f"{BUS}.Settings.Connection", "GetSettings")
            profiles[path] = {
                group: {key: value[1] for key, value in values.items()} for group, values in settings.items()
            }
        return profiles

    def known_wifi(self) -> dict[bytes, str]:
        """The saved Wi-Fi client profiles, SSID -> profile uuid (the access point's own left out)."""
        known = {}
        for settings in self._profiles().values():
            wireless, connection = settings.get("802-11-wireless", {}), settings.get("connection", {})
            if connection.get("uuid") != OWN_UUID and wireless.get("mode", "infrastructure") != "ap":
                known[bytes(wireless.get("ssid", b""))] = str(connection.get("uuid"))
        known.pop(b"", None)
        return known

    def visible(self) -> set[bytes]:
        """Ask for a scan, then the SSIDs the device knows of. NetworkManager may refuse to scan (it
        does in access point mode on many drivers): then the list is the one it saw last."""
        device = self.device()
        wireless = f"{BUS}.Device.Wireless"
        with contextlib.suppress(NetworkManagerError):
            self._call(device, wireless, "RequestScan", "a{sv}", {})
        return {
            bytes(self._get(ap, f"{BUS}.AccessPoint", "Ssid"))
            for ap in self._get(device, wireless, "AccessPoints")
        }

    def raise_ap(self, ssid: str, password: str) -> None:
        """Save the access point's profile (new, or updated to these settings) and activate it."""
        settings = _ap_settings(ssid, password, self.interface)
        profile = next(
            (path for path, found in self._profiles().items() if found["connection"].get("uuid") == OWN_UUID),
            None,
        )
        if profile is None:
            (profile,) = self._call(SETTINGS, f"{BUS}.Settings", "AddConnection", "a{sa{sv}}", settings)
        else:
            self._call(profile, f"{BUS}.Settings.Connection", "Update", "a{sa{sv}}", settings)
        device = self.device()
        current = self._get(device, f"{BUS}.Device", "ActiveConnection")
        if current != "/" and current not in {a.path for a in self.active() if a.uuid == OWN_UUID}:
            self._call(MANAGER, BUS, "DeactivateConnection", "o", current)  # one radio: client off first
        self._call(MANAGER, BUS, "ActivateConnection", "ooo", profile, device, "/")

    def drop_ap(self) -> None:
        """Deactivate the access point (its profile stays saved, for the next time)."""
        for active in self.active():
            if active.uuid == OWN_UUID:
                self._call(MANAGER, BUS, "DeactivateConnection", "o", active.path)

    def join(self, profile_uuid: str) -> None:
        """Activate a saved Wi-Fi client profile on the device."""
        (path,) = self._call(SETTINGS, f"{BUS}.Settings", "GetConnectionByUuid", "s", profile_uuid)
        self._call(MANAGER, BUS, "ActivateConnection", "ooo", path, self.device(), "/")


def _ap_settings(ssid: str, password: str, interface: str) -> dict[str, dict[str, tuple[str, Any]]]:
    return {
        "connection": {
            "id": ("s", OWN_ID),
            "uuid": ("s", OWN_UUID),
            "type": ("s", "802-11-wireless"),
            "interface-name": ("s", interface),
            "autoconnect": ("b", False),
        },
        "802-11-wireless": {"ssid": ("ay", ssid.encode()), "mode": ("s", "ap"), "band": ("s", "bg")},
        "802-11-wireless-security": {
            "key-mgmt": ("s", "wpa-psk"),
            "psk": ("s", password),
            "proto": ("as", ["rsn"]),
            "pairwise": ("as", ["ccmp"]),
            "group": ("as", ["ccmp"]),
        },
        "ipv4": {"method": ("s", "shared")},
        "ipv6": {"method": ("s", "disabled")},
    }
