"""When the table raises its own access point and when it drops it: a pure state machine.

The watcher (companion.network.hotspot) looks at NetworkManager every few seconds and hands what it
saw to `HotspotRules.step` with the time; the rules answer what to do. They never touch D-Bus and
never read a clock, so every transition is tested with made-up times (tests/network/test_rules.py).

The rules, for a hold of "auto" (`[network] hotspot = "auto"`, or `companion hotspot auto`):

1. Connected (any active connection that is not the table's own access point: a known Wi-Fi, a
   cable) -> nothing to do.
2. Not connected and no access point for `wait` seconds in a row (counted from the start, from the
   moment a connection was lost, or from the moment the access point was dropped to join a known
   network) -> raise the access point.
3. The access point is up: every `scan_every` seconds the watcher asks for a scan (`scan_due`) and
   reports a known Wi-Fi profile whose SSID it saw. A known network in sight -> drop the access
   point first, then join that profile (one radio: never client and access point at once). If
   the join has not connected `wait` seconds later, rule 2 raises the access point again.
   None in sight and no phone on the access point -> drop it all the same, so that NetworkManager
   looks for a known network itself (most drivers do not let it scan while it is an access
   point); rule 2 raises it again `wait` seconds later if nothing connected. With a phone on it,
   it stays up.
4. A cable that comes up while the access point is up leaves it up: it does not need the radio.

A hold of "on" (`hotspot = "on"`, `companion hotspot on`) raises the access point if it is not up
and never scans; "off" drops it if it is up and never raises it. A new hold restarts rule 2's count.
"""

from __future__ import annotations

from dataclasses import dataclass

HOLDS = ("auto", "on", "off")


@dataclass(frozen=True)
class Seen:
    """What the watcher saw: `connected` a connection other than the access point is up; `hotspot`
    the table's access point is up. After a scan (`scan_due` said yes; `scanned`), also
    `known_in_sight`, the id of a known Wi-Fi profile whose SSID it saw (or None), and `clients`,
    the phones on the access point."""

    connected: bool
    hotspot: bool
    known_in_sight: str | None = None
    scanned: bool = False
    clients: int = 0


@dataclass(frozen=True)
class Action:
    """`raise` the access point, `drop` it, or `join` the known profile `profile`."""

    kind: str
    profile: str | None = None


RAISE = Action("raise")
DROP = Action("drop")


class HotspotRules:
    def __init__(self, hold: str, wait: float, scan_every: float, now: float) -> None:
        if hold not in HOLDS:
            raise ValueError(f"hold must be one of {HOLDS}, not {hold!r}")
        self.hold = hold
        self.wait = wait
        self.scan_every = scan_every
        self._alone_since: float | None = now  # rule 2: since when nothing is up
        self._scanned_at = now

    def command(self, hold: str, now: float) -> None:
        """A new hold (`companion hotspot on|off|auto`); rule 2 counts again from now."""
        if hold not in HOLDS:
            raise ValueError(f"hold must be one of {HOLDS}, not {hold!r}")
        self.hold = hold
        self._alone_since = now
        self._scanned_at = now

    def scan_due(self, now: float, seen: Seen) -> bool:
        """Rule 3: whether to scan for a known network now (then the next `step` says what it saw)."""
        if self.hold != "auto" or not seen.hotspot or now - self._scanned_at < self.scan_every:
            return False
        self._scanned_at = now
        return True

    def step(self, now: float, seen: Seen) -> list[Action]:
        """What to do, in order, about what the watcher saw at `now`."""
        if self.hold == "on":
            return [] if seen.hotspot else [RAISE]
        if self.hold == "off":
            return [DROP] if seen.hotspot else []
        if seen.hotspot:
            self._alone_since = None
            if seen.known_in_sight is not None:
                self._alone_since = now  # rule 3: a join that fails raises the access point again
                return [DROP, Action("join", seen.known_in_sight)]
            if seen.scanned and seen.clients == 0:
                self._alone_since = now  # rule 3: nobody on it: step aside for NetworkManager to look
                return [DROP]
            return []
        if seen.connected:
            self._alone_since = None
            return []
        if self._alone_since is None:
            self._alone_since = now
        if now - self._alone_since < self.wait:
            return []
        self._alone_since = None
        self._scanned_at = now
        return [RAISE]

    def waiting(self, now: float) -> float | None:
        """Seconds until rule 2 raises the access point, or None when it is not counting."""
        if self.hold != "auto" or self._alone_since is None:
            return None
        return max(0.0, self.wait - (now - self._alone_since))
