"""The watcher against python-dbusmock's NetworkManager on a real, private dbus-daemon: every
transition (no network -> hotspot -> home network back -> lost again), and the holds by command."""

from __future__ import annotations

import json
from pathlib import Path

from companion.core.config import NetworkSettings
from companion.network.hotspot import Hotspot
from companion.network.nm import OWN_UUID
from tests.nm_mock import MockNM

SSID = 'Table "A"; 1,2:3\\'  # every character the QR code must escape


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def watcher(tmp_path: Path, clock: Clock, hold: str = "auto") -> Hotspot:
    arp = tmp_path / "arp"
    arp.write_text(
        "IP address       HW type     Flags       HW address            Mask     Device\n"
        "10.42.0.10       0x1         0x2         aa:bb:cc:00:00:01     *        wlan0\n"
        "10.42.0.11       0x1         0x2         aa:bb:cc:00:00:02     *        wlan0\n"
        "10.42.0.12       0x1         0x0         00:00:00:00:00:00     *        wlan0\n"
        "192.168.1.1      0x1         0x2         aa:bb:cc:00:00:03     *        eth0\n"
    )
    settings = NetworkSettings(hotspot=hold, wait=60, ssid=SSID, scan_every=120)
    return Hotspot(settings, tmp_path / "network.json", clock=clock, arp=arp)


def on_device(nm: MockNM) -> list[dict[str, object]]:
    """What is active on the Wi-Fi device: never more than one thing (one radio)."""
    found = [a for a in nm.active() if nm.device in a["devices"]]
    assert len(found) <= 1, f"client and access point at once: {found}"
    return found


def test_no_network_then_hotspot_then_home_back_then_lost(mock_nm: MockNM, tmp_path: Path) -> None:
    clock = Clock()
    hotspot = watcher(tmp_path, clock)
    assert hotspot.tick() == [] and hotspot.status()["mode"] == "off"
    assert hotspot.status()["raises_in"] == 60
    clock.now += 59
    assert hotspot.tick() == [] and on_device(mock_nm) == []

    clock.now += 1  # 60 s without a network: the access point goes up
    assert [a.kind for a in hotspot.tick()] == ["raise"]
    (active,) = on_device(mock_nm)
    assert active["uuid"] == OWN_UUID and active["id"] == "companion-hotspot"
    profile = mock_nm.profile(OWN_UUID)
    assert bytes(profile["802-11-wireless"]["ssid"]).decode() == SSID
    assert profile["802-11-wireless"]["mode"] == "ap" and profile["ipv4"]["method"] == "shared"
    assert profile["connection"]["autoconnect"] == 0
    security = profile["802-11-wireless-security"]
    password = json.loads((tmp_path / "network.json").read_text())["password"]
    assert security["key-mgmt"] == "wpa-psk" and list(security["proto"]) == ["rsn"]
    assert security["psk"] == password == hotspot.password and len(password) == 12
    assert hotspot.status() == {
        "mode": "hotspot",
        "hold": "auto",
        "ssid": SSID,
        "clients": 2,
        "raises_in": None,
        "error": None,
    }

    home = mock_nm.add_network("home", "Home", known=True)
    mock_nm.add_network("cafe", "Cafe", known=False)  # in sight but unknown: never joined
    clock.now += 119
    assert hotspot.tick() == []  # not yet time to look
    clock.now += 1
    assert [(a.kind, a.profile) for a in hotspot.tick()] == [("drop", None), ("join", home)]
    (active,) = on_device(mock_nm)
    assert active["uuid"] == home and hotspot.status()["mode"] == "client"
    assert hotspot.status()["clients"] == 0  # the neighbours counted are the access point's only

    mock_nm.mock.RemoveActiveConnection(mock_nm.device, active["path"])  # the home network is gone
    assert hotspot.tick() == [] and hotspot.status()["mode"] == "off"
    clock.now += 60
    assert [a.kind for a in hotspot.tick()] == ["raise"]
    assert [a["uuid"] for a in on_device(mock_nm)] == [OWN_UUID]
    # The same profile is updated, not a second one added; the password was kept.
    assert hotspot.password == password


def test_a_known_network_at_the_start_means_no_hotspot(mock_nm: MockNM, tmp_path: Path) -> None:
    clock = Clock()
    home = mock_nm.add_network("home", "Home", known=True)
    hotspot = watcher(tmp_path, clock)
    # NetworkManager joins it by itself (autoconnect): activated from outside the companion.
    manager = mock_nm.bus.get_object("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager")
    path = mock_nm.bus.get_object(
        "org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager/Settings"
    ).GetConnectionByUuid(home, dbus_interface="org.freedesktop.NetworkManager.Settings")
    manager.ActivateConnection(path, mock_nm.device, "/", dbus_interface="org.freedesktop.NetworkManager")
    clock.now += 3600
    assert hotspot.tick() == [] and hotspot.status()["mode"] == "client"
    assert [a["uuid"] for a in on_device(mock_nm)] == [home]


def test_on_and_off_by_command(mock_nm: MockNM, tmp_path: Path) -> None:
    clock = Clock()
    home = mock_nm.add_network("home", "Home", known=True)
    hotspot = watcher(tmp_path, clock)
    status = hotspot.command("on")  # at once, no wait
    assert status["mode"] == "hotspot" and status["hold"] == "on"
    assert [a["uuid"] for a in on_device(mock_nm)] == [OWN_UUID]
    clock.now += 3600  # held: no scan, though a known network is in sight
    assert hotspot.tick() == [] and hotspot.status()["mode"] == "hotspot"

    status = hotspot.command("off")
    assert status["mode"] == "off" and status["hold"] == "off" and on_device(mock_nm) == []
    clock.now += 3600  # off: never raised again
    assert hotspot.tick() == [] and on_device(mock_nm) == []

    hotspot.command("auto")
    clock.now += 60
    assert [a.kind for a in hotspot.tick()] == ["raise"]
    clock.now += 120
    assert [a.kind for a in hotspot.tick()] == ["drop", "join"]
    assert [a["uuid"] for a in on_device(mock_nm)] == [home]

    status = hotspot.command("on")  # from a client connection: the client goes first
    assert status["mode"] == "hotspot" and [a["uuid"] for a in on_device(mock_nm)] == [OWN_UUID]


def test_no_network_manager_is_said_not_crashed(mock_nm: MockNM, tmp_path: Path, monkeypatch) -> None:
    clock = Clock()
    hotspot = watcher(tmp_path, clock, hold="on")
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus")
    assert hotspot.tick() == []
    assert "no system D-Bus" in hotspot.status()["error"] and hotspot.status()["mode"] == "off"
    monkeypatch.undo()  # the bus is back: the next look raises the access point
    assert [a.kind for a in hotspot.tick()] == ["raise"] and hotspot.status()["error"] is None


def test_an_idle_access_point_steps_aside_for_network_manager(mock_nm: MockNM, tmp_path: Path) -> None:
    clock = Clock()
    hotspot = watcher(tmp_path, clock)
    clock.now += 60
    assert [a.kind for a in hotspot.tick()] == ["raise"]
    clock.now += 120  # a scan, nothing known in sight, but two phones on it: it stays up
    assert hotspot.tick() == [] and [a["uuid"] for a in on_device(mock_nm)] == [OWN_UUID]
    (tmp_path / "arp").write_text(
        "IP address       HW type     Flags       HW address            Mask     Device\n"
    )
    clock.now += 120  # nobody on it: it steps aside for NetworkManager to look
    assert [a.kind for a in hotspot.tick()] == ["drop"] and on_device(mock_nm) == []
    clock.now += 59
    assert hotspot.tick() == []
    clock.now += 1  # nothing connected within `wait`: up again
    assert [a.kind for a in hotspot.tick()] == ["raise"]
    mock_nm.add_network("home", "Home", known=False)  # in sight; its profile comes below
    clock.now += 120
    assert [a.kind for a in hotspot.tick()] == ["drop"]
    # NetworkManager joins a network it knows by itself (the mock needs it done from outside).
    path = mock_nm.mock.AddWiFiConnection(mock_nm.device, "home", "Home", "wpa-psk")
    manager = mock_nm.bus.get_object("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager")
    manager.ActivateConnection(path, mock_nm.device, "/", dbus_interface="org.freedesktop.NetworkManager")
    clock.now += 3600
    assert hotspot.tick() == [] and hotspot.status()["mode"] == "client"
    assert [a["id"] for a in on_device(mock_nm)] == ["Home"]
