"""`companion pair`: asks the running daemon, on loopback with the token, for a pairing code (or to
unpair every device) and shows it with the address to type it at."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from companion.appliance.loopback import ask_daemon
from companion.appliance.urls import table_addresses
from companion.core.config import config_path, load_config
from companion.webapp.pairing import CODE_SECONDS


def add_pair_command(commands: Any) -> None:
    pair = commands.add_parser("pair", help="show a code that pairs a control device (no token on the air)")
    pair.add_argument("--config", type=Path, help="the config file (default /etc/companion/companion.toml)")
    pair.add_argument("--port", type=int, help="the daemon's port (default: the config's)")
    pair.add_argument("--forget", action="store_true", help="unpair every control device instead")
    pair.set_defaults(command=cmd_pair)


def cmd_pair(args: argparse.Namespace) -> int:
    config = load_config(config_path(args.config))
    if not config.token:
        print("companion: no control token in the config (or COMPANION_TOKEN)", file=sys.stderr)
        return 2
    port = args.port or config.port
    method = "DELETE" if args.forget else "POST"
    try:
        answer = ask_daemon(method, "/api/pairing", port, config.token)
    except OSError as error:
        print(f"companion: the daemon does not answer on port {port}: {error}", file=sys.stderr)
        return 1
    if args.forget:
        print(f"Unpaired {answer['forgot']} control device(s).")
        return 0
    code = answer["code"]
    url = f"http://{table_addresses(config.host)[0]}:{port}/pair"
    print(f"Pairing code: {code[:3]} {code[3:]}  (valid {CODE_SECONDS // 60} minutes, once)")
    print(f"On the control device open {url} and type it.")
    return 0
