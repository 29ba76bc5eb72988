"""python-dbusmock's NetworkManager template on a private system bus: a real dbus-daemon started for
the test, DBUS_SYSTEM_BUS_ADDRESS pointed at it, so the companion's own D-Bus calls (jeepney, in
companion/network/nm.py) run unchanged. The test drives the mock (a Wi-Fi device, access points in
sight, known profiles, a lost connection) through dbusmock's own control interface, with dbus-python."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

DEVICE_STATE_DISCONNECTED = 30
PSK = 0x100  # NM80211ApSecurityFlags: WPA-PSK


@dataclass
class MockNM:
    mock: Any  # dbusmock's control interface (AddWiFiDevice, AddAccessPoint, ...)
    bus: Any  # a dbus-python connection to the private bus, to read what the companion did
    device: str

    def get(self, path: str, interface: str, name: str) -> Any:
        return self.bus.get_object("org.freedesktop.NetworkManager", path).Get(
            interface, name, dbus_interface="org.freedesktop.DBus.Properties"
        )

    def active(self) -> list[dict[str, Any]]:
        """The active connections: uuid, id, state and devices."""
        nm = "org.freedesktop.NetworkManager"
        found = []
        for path in self.get("/org/freedesktop/NetworkManager", nm, "ActiveConnections"):
            iface = f"{nm}.Connection.Active"
            found.append(
                {
                    "path": str(path),
                    "uuid": str(self.get(path, iface, "Uuid")),
                    "id": str(self.get(path, iface, "Id")),
                    "devices": [str(d) for d in self.get(path, iface, "Devices")],
                }
            )
        return found

    def profile(self, uuid: str) -> dict[str, dict[str, Any]]:
        settings = self.bus.get_object(
            "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager/Settings"
        )
        path = settings.GetConnectionByUuid(uuid, dbus_interface="org.freedesktop.NetworkManager.Settings")
        connection = self.bus.get_object("org.freedesktop.NetworkManager", path)
        return connection.GetSettings(dbus_interface="org.freedesktop.NetworkManager.Settings.Connection")

    def add_network(self, name: str, ssid: str, known: bool) -> str:
        """A Wi-Fi network in sight; `known`: with a saved profile. Returns the profile's uuid (or "")."""
        self.mock.AddAccessPoint(
            self.device, f"ap_{name}", ssid, "00:11:22:33:44:55", 2, 2437, 54000, 80, PSK
        )
        if not known:
            return ""
        path = self.mock.AddWiFiConnection(self.device, name, ssid, "wpa-psk")
        return str(self.profile_by_path(path)["connection"]["uuid"])

    def profile_by_path(self, path: str) -> dict[str, dict[str, Any]]:
        connection = self.bus.get_object("org.freedesktop.NetworkManager", path)
        return connection.GetSettings(dbus_interface="org.freedesktop.NetworkManager.Settings.Connection")


@pytest.fixture
def mock_nm() -> Iterator[MockNM]:
    if shutil.which("dbus-daemon") is None:
        if os.environ.get("CI"):
            pytest.fail("dbus-daemon is required in CI (scripts/test installs it)")
        pytest.skip("dbus-daemon is not installed (apt install dbus-daemon; ./scripts/test does)")
    dbusmock = pytest.importorskip("dbusmock", reason="python-dbusmock is not installed (the test extra)")
    import dbus

    before = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS")
    bus = dbusmock.PrivateDBus(dbusmock.BusType.SYSTEM)
    bus.start()  # sets DBUS_SYSTEM_BUS_ADDRESS for this process
    try:
        with dbusmock.SpawnedMock.spawn_with_template("networkmanager") as server:
            connection = dbus.bus.BusConnection(bus.address)
            mock = dbus.Interface(
                connection.get_object("org.freedesktop.NetworkManager", "/org/freedesktop"),
                dbusmock.MOCK_IFACE,
            )
            device = str(mock.AddWiFiDevice("wlan0", "wlan0", DEVICE_STATE_DISCONNECTED))
            yield MockNM(mock, connection, device)
            connection.close()
            assert server.process.poll() is None, "the NetworkManager mock died during the test"
    finally:
        bus.stop()
        if before is None:
            os.environ.pop("DBUS_SYSTEM_BUS_ADDRESS", None)
        else:
            os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = before
