"""The Pi around the table: the config and its token, the port (free, or a running companion's
/healthz), the GPIO pins, and the systemd service with its user."""

from __future__ import annotations

import contextlib
import grp
import json
import pwd
import shutil
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from companion.appliance.doctor.report import Check, fail, ok, warn
from companion.core.config import Config, ConfigError, load_config

SERVICE_USER = "companion"
SERVICE_UNIT = Path("/etc/systemd/system/companion.service")
# What lets the service user run `systemctl poweroff` (the power-off hold; docs/operations.md).
POLKIT_RULE = Path("/etc/polkit-1/rules.d/50-companion-poweroff.rules")


def check_config(path: Path | None) -> tuple[Config, list[Check]]:
    where = str(path) if path else "no config file (defaults and environment)"
    try:
        config = load_config(path)
    except ConfigError as error:
        fix = f"edit {path}, see docs/configuration.md" if path else "see docs/configuration.md"
        return Config(), [fail("config", str(error), fix)]
    checks = [ok("config", f"{where}: read")]
    if path is not None and path.stat().st_mode & 0o004:
        checks.append(
            warn("config", f"{path} is readable by every user, and it holds the token", f"chmod 640 {path}")
        )
    if config.token:
        checks.append(ok("token", "a control token is set"))
    else:
        checks.append(
            fail(
                "token",
                "no control token: the daemon refuses to start without one",
                f"set token in [server] of {path or 'the config'} (the installer writes a random one), "
                "or COMPANION_TOKEN",
            )
        )
    return config, checks


def check_port(config: Config) -> tuple[Check, dict[str, Any] | None]:
    """Whether the port is free, or held by a running companion (then its /healthz too)."""
    host, port = config.host, config.port
    if not 0 < port < 65536:
        return fail("port", f"port {port} is not a port number", "set port in [server]"), None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as waitress does
        try:
            probe.bind((host, port))
        except OSError as error:
            busy = error
        else:
            return ok("port", f"{host}:{port} is free for the daemon"), None
    health = _healthz(host, port)
    if health is None:
        return (
            fail(
                "port",
                f"{host}:{port} is taken by another program ({busy.strerror})",
                f"stop it (see `sudo ss -ltnp 'sport = :{port}'`) or choose another port in [server]",
            ),
            None,
        )
    if not health.get("ok"):
        return fail(
            "port", f"the companion on port {port} is unwell: {health}", "see `journalctl -u companion`"
        ), health
    return ok("port", f"a companion is running on port {port} (journal {health.get('journal')})"), health


def _healthz(host: str, port: int) -> dict[str, Any] | None:
    """The /healthz of a companion listening there, or None when it is something else."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    url = f"http://[{shown}]:{port}/healthz" if ":" in shown else f"http://{shown}:{port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            body = json.load(response)
    except urllib.error.HTTPError as error:  # 503: a companion whose journal is not ok
        try:
            body = json.load(error)
        except ValueError:
            return None
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) and "journal" in body and "gpio" in body else None


def check_pins(config: Config) -> list[Check]:
    from companion.pins import board
    from companion.pins import devices as pins

    try:  # GPIO 14/15 count as taken when a reader is on the UART
        layout = pins.PinLayout.of(config)
    except ConfigError as error:
        return [fail("pins", str(error), "fix [pins] in the config, see hardware/README.md")]
    on_pi = board.is_raspberry_pi()
    found = [check_gpiozero(board.gpiozero_in_use(), on_pi)]
    try:  # on a Pi with a pin map, no pins is a failure: never quietly mock pins
        factory, name = pins.choose_pin_factory(
            force_mock=config.mock_pins, fallback=not (on_pi and layout.uses_pins)
        )
    except pins.NoGpio as error:
        return [*found, fail("pins", board.unavailable(str(error)), board.PINS_FIX)]
    shown = board.factory_name(factory, name)
    with contextlib.suppress(Exception):  # only looked at: nothing of it is in use
        factory.close()
    return found + _pins_found(config, name, shown)


def check_gpiozero(gpiozero: Any, on_pi: bool) -> Check:
    """Which gpiozero the daemon imports, and from where (a `companion.pins.board.Gpiozero`)."""
    if on_pi and gpiozero.origin != "apt":
        return warn(
            "gpiozero",
            f"{gpiozero.describe()}: Raspberry Pi OS's own python3-gpiozero carries the Pi 5 fixes "
            "(gpiozero 2.0.1 from PyPI opens gpiochip4, kernels from 6.6.45 number the header gpiochip0)",
            "sudo apt install python3-gpiozero python3-lgpio, then re-run systemd/install.sh (it takes "
            "them from apt and lets the venv see them)",
        )
    return ok("gpiozero", gpiozero.describe())


def check_power_off(config: Config) -> list[Check]:
    """The power-off hold under systemd: the service user may run `systemctl poweroff` only with
    the polkit rule the installer puts in place."""
    from companion.pins.devices import PinLayout

    try:
        layout = PinLayout.of(config)
    except ConfigError:
        return []  # check_pins says it
    if not SERVICE_UNIT.exists() or layout.power_off_hold == 0:
        return []
    if layout.power_off_command != ("systemctl", "poweroff") or POLKIT_RULE.exists():
        return [
            ok(
                "power-off",
                f"Next and Undo held {layout.power_off_hold:g} s: {' '.join(layout.power_off_command)}",
            )
        ]
    return [
        warn(
            "power-off",
            f"no {POLKIT_RULE}: holding Next and Undo would close the table but not power off the Pi",
            f"sudo install -m 644 systemd/companion-poweroff.rules {POLKIT_RULE} (the installer does), "
            "or set [pins] power_off_hold = 0",
        )
    ]


def _pins_found(config: Config, name: str, shown: str) -> list[Check]:
    if name == "mock":
        if config.mock_pins:
            return [ok("pins", "mock pins, as asked")]
        return [
            warn(
                "pins",
                "no GPIO here: mock pins will be used, so the LEDs, buzzer and seat buttons do nothing",
                "on a Raspberry Pi install python3-lgpio (the installer does)",
            )
        ]
    checks = [ok("pins", f"GPIO through gpiozero's {shown} pins")]
    device = next((d for d in (Path("/dev/gpiochip0"), Path("/dev/gpiomem")) if d.exists()), None)
    member = user_groups(SERVICE_USER)
    if device is not None and member is not None:
        group = grp.getgrgid(device.stat().st_gid).gr_name
        if group not in member:
            checks.append(
                warn(
                    "pins",
                    f"the service user {SERVICE_USER} is not in the group {group} that owns {device}",
                    f"sudo usermod -aG {group} {SERVICE_USER} && sudo systemctl restart companion",
                )
            )
    return checks


def check_service() -> list[Check]:
    if not SERVICE_UNIT.exists() or shutil.which("systemctl") is None:
        return []  # not installed as a service here (a laptop, a test)

    def ask(verb: str) -> str:
        done = subprocess.run(["systemctl", verb, "companion"], capture_output=True, text=True, timeout=10)
        return done.stdout.strip() or done.stderr.strip()

    enabled, active = ask("is-enabled"), ask("is-active")
    checks = []
    if enabled != "enabled":
        checks.append(
            warn(
                "service",
                f"companion.service is {enabled}: it will not start at boot",
                "sudo systemctl enable companion",
            )
        )
    if active == "active":
        checks.append(ok("service", "companion.service is running"))
    else:
        checks.append(
            fail(
                "service",
                f"companion.service is {active}",
                "see `journalctl -u companion -b`, then `sudo systemctl restart companion`",
            )
        )
    return checks


def user_groups(user: str) -> set[str] | None:
    """The groups `user` is in (its own and the others), or None when there is no such user."""
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return None
    names = {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
    names.add(grp.getgrgid(entry.pw_gid).gr_name)
    return names
