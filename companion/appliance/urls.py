"""`companion url`: the scoreboard's address (or the control page's, with its token) and a QR code for
the tablet; `table_addresses`, the addresses a tablet can reach the daemon at. With [network], the
table's own Wi-Fi first: its name, password and a QR code a phone's camera joins, then the
scoreboard's (docs/operations.md, "Its own Wi-Fi")."""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from typing import Any

from companion.appliance.doctor import common_arguments
from companion.core.config import Config, config_path, load_config
from companion.network.wifi import SHARED_ADDRESS, hotspot_password, state_path, wifi_qr_text


def add_url_command(subparsers: Any) -> None:
    url = subparsers.add_parser("url", help="print the scoreboard's address and a QR code for the tablet")
    common_arguments(url)
    url.add_argument("--control", action="store_true", help="the control page, with its token, instead")
    url.add_argument("--no-qr", action="store_true", help="only the addresses")
    url.set_defaults(command=cmd_url)


def cmd_url(args: argparse.Namespace) -> int:
    config = load_config(config_path(args.config))
    port = args.port or config.port
    path = "/"
    if args.control:
        if not config.token:
            print("companion: no control token in the config (or COMPANION_TOKEN)", file=sys.stderr)
            return 2
        path = f"/control#token={config.token}"
    urls = [f"http://{host}:{port}{path}" for host in table_addresses(config.host)]
    if config.network is not None and config.network.hotspot != "off":
        if not print_wifi(config, args.no_qr):
            return 1
        urls.append(f"http://{SHARED_ADDRESS}:{port}{path}")  # on the table's own Wi-Fi
    print("Open this on the tablet:" if not args.control else "The control page (keep it to the host):")
    for url in urls:
        print(f"  {url}")
    if not args.no_qr:
        import segno

        segno.make(urls[0]).terminal(compact=True)
    return 0


def print_wifi(config: Config, no_qr: bool) -> bool:
    """The access point's name, password and Wi-Fi QR code; False (and why, on stderr) when its
    password cannot be read or kept."""
    assert config.network is not None
    try:
        password = hotspot_password(config.network, state_path(config))
    except OSError as error:
        print(f"companion: {error} (run it with sudo?)", file=sys.stderr)
        return False
    ssid = config.network.name
    print(f"The table's own Wi-Fi (up when no known network is): {ssid}, password {password}")
    if not no_qr:
        import segno

        segno.make(wifi_qr_text(ssid, password), error="m").terminal(compact=True)
    return True


def table_addresses(host: str) -> list[str]:
    """Addresses a tablet can reach the daemon at: the IPv4 ones first (mDNS names are not resolved
    by every Android browser), then the `.local` name."""
    if host not in ("0.0.0.0", "::", ""):
        return [host]
    found: list[str] = []
    try:  # `hostname -I`: every address of every interface, no traffic sent
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout
        found = [a for a in out.split() if "." in a and not a.startswith("127.")]
    except (OSError, subprocess.SubprocessError):
        pass
    return [*found, f"{socket.gethostname()}.local"]
