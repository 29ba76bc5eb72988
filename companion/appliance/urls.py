"""`companion url`: the scoreboard's address (or the control page's, with its token) and a QR code for
the tablet; `table_addresses`, the addresses a tablet can reach the daemon at."""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from typing import Any

from companion.appliance.doctor import common_arguments
from companion.core.config import config_path, load_config


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
    print("Open this on the tablet:" if not args.control else "The control page (keep it to the host):")
    for url in urls:
        print(f"  {url}")
    if not args.no_qr:
        import segno

        segno.make(urls[0]).terminal(compact=True)
    return 0


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
