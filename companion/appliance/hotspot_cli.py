"""`companion hotspot on|off|auto|status`: asks the running daemon, on loopback with the token, to
hold its access point up (`on`), down (`off`), or to go back to the rules of companion.network.rules
(`auto`), and says where it stands. The daemon is the one owner of NetworkManager's Wi-Fi: two
programs raising and dropping the same radio would fight."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from companion.appliance.loopback import ask_daemon
from companion.core.config import config_path, load_config


def add_hotspot_command(commands: Any) -> None:
    hotspot = commands.add_parser("hotspot", help="the table's own Wi-Fi: on, off, auto or status")
    hotspot.add_argument(
        "hold", choices=["on", "off", "auto", "status"], help="what to do (status: only say)"
    )
    hotspot.add_argument(
        "--config", type=Path, help="the config file (default /etc/companion/companion.toml)"
    )
    hotspot.add_argument("--port", type=int, help="the daemon's port (default: the config's)")
    hotspot.set_defaults(command=cmd_hotspot)


def cmd_hotspot(args: argparse.Namespace) -> int:
    config = load_config(config_path(args.config))
    if config.network is None:
        print(
            "companion: no [network] in the config: add one (see hardware/companion.example.toml)",
            file=sys.stderr,
        )
        return 2
    if not config.token:
        print("companion: no control token in the config (or COMPANION_TOKEN)", file=sys.stderr)
        return 2
    port = args.port or config.port
    try:
        if args.hold == "status":
            status = ask_daemon("GET", "/api/hotspot", port, config.token, timeout=30)
        else:
            status = ask_daemon("POST", "/api/hotspot", port, config.token, {"hold": args.hold}, timeout=30)
    except OSError as error:
        print(f"companion: the daemon does not answer on port {port}: {error}", file=sys.stderr)
        return 1
    for line in describe(status):
        print(line)
    return 0


def describe(status: dict[str, Any]) -> list[str]:
    """The status in a few lines for the host."""
    mode = status["mode"]
    lines = [f"mode: {mode} (hold: {status['hold']})"]
    if mode == "hotspot":
        lines.append(f"access point: {status['ssid']}, {status['clients']} client(s)")
    elif status.get("raises_in") is not None:
        lines.append(f"no network: the access point {status['ssid']} goes up in {status['raises_in']} s")
    if status.get("error"):
        lines.append(f"NetworkManager: {status['error']}")
    return lines
