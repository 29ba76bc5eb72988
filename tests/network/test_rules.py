"""The hotspot's rules (companion.network.rules), with made-up times: each rule of the docstring."""

from __future__ import annotations

import pytest

from companion.network.rules import DROP, RAISE, Action, HotspotRules, Seen

NOTHING = Seen(connected=False, hotspot=False)
CLIENT = Seen(connected=True, hotspot=False)
AP = Seen(connected=False, hotspot=True)


def test_rule_2_raises_after_wait_seconds_alone() -> None:
    rules = HotspotRules("auto", wait=60, scan_every=120, now=0)
    assert rules.step(59.9, NOTHING) == [] and rules.waiting(30) == 30
    assert rules.step(60, NOTHING) == [RAISE]


def test_rule_1_a_connection_stops_the_count_and_its_loss_starts_it_again() -> None:
    rules = HotspotRules("auto", wait=60, scan_every=120, now=0)
    assert rules.step(50, CLIENT) == [] and rules.waiting(50) is None
    assert rules.step(100, NOTHING) == []  # lost at 100: the count starts again
    assert rules.step(159, NOTHING) == []
    assert rules.step(160, NOTHING) == [RAISE]


def test_rule_3_scans_every_scan_every_seconds_and_joins_a_known_network() -> None:
    rules = HotspotRules("auto", wait=60, scan_every=120, now=0)
    assert rules.step(60, NOTHING) == [RAISE]
    assert not rules.scan_due(179, AP) and rules.scan_due(180, AP)
    assert not rules.scan_due(181, AP)  # the next one 120 s later
    assert rules.step(180, AP) == []  # the scan saw nothing known
    assert rules.scan_due(300, AP)
    assert rules.step(300, Seen(False, True, "home-uuid")) == [DROP, Action("join", "home-uuid")]
    # The join failed: `wait` seconds after the drop the access point goes up again.
    assert rules.step(330, NOTHING) == []
    assert rules.step(360, NOTHING) == [RAISE]


def test_rule_4_a_cable_leaves_the_access_point_up() -> None:
    rules = HotspotRules("auto", wait=60, scan_every=120, now=0)
    assert rules.step(1000, Seen(connected=True, hotspot=True)) == []


def test_the_holds() -> None:
    rules = HotspotRules("on", wait=60, scan_every=120, now=0)
    assert rules.step(0, CLIENT) == [RAISE] and rules.step(1, AP) == []
    assert not rules.scan_due(10_000, AP)  # held on: never scans
    rules.command("off", now=10)
    assert rules.step(10, AP) == [DROP] and rules.step(10_000, NOTHING) == []
    rules.command("auto", now=20_000)
    assert rules.step(20_059, NOTHING) == [] and rules.step(20_060, NOTHING) == [RAISE]
    with pytest.raises(ValueError, match="hold must be one of"):
        rules.command("sometimes", now=0)


def test_rule_3_an_idle_access_point_steps_aside_and_a_used_one_stays() -> None:
    rules = HotspotRules("auto", wait=60, scan_every=300, now=0)
    assert rules.step(60, NOTHING) == [RAISE]
    assert rules.scan_due(360, AP)
    assert rules.step(360, Seen(False, True, None, scanned=True, clients=2)) == []  # phones on it
    assert rules.scan_due(660, AP)
    assert rules.step(660, Seen(False, True, None, scanned=True, clients=0)) == [DROP]
    assert rules.step(700, CLIENT) == []  # NetworkManager found a known network by itself
    assert rules.step(800, NOTHING) == [] and rules.step(860, NOTHING) == [RAISE]  # lost again
