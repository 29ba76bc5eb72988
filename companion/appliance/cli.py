"""The `companion` command: `run` the daemon, or try it with `demo`."""

from __future__ import annotations

import _thread
import argparse
import logging
import secrets
import shutil
import signal
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from companion import __version__
from companion.appliance.cards_cli import add_cards_commands
from companion.appliance.doctor import add_doctor_command
from companion.appliance.hotspot_cli import add_hotspot_command
from companion.appliance.pair_cli import add_pair_command
from companion.appliance.systemd import Service
from companion.appliance.urls import add_url_command
from companion.core.config import Config, ConfigError, load_config, parse_mqtt
from companion.games.catalog import DataError
from companion.mqtt.league import add_league_command
from companion.table.journal import JournalError

log = logging.getLogger("companion")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="companion: %(message)s", stream=sys.stderr)
    try:
        return int(args.command(args) or 0)
    except (ConfigError, DataError, JournalError, StartError) as error:
        print(f"companion: {error}", file=sys.stderr)
        return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="companion", description="Table Companion for card games.")
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    commands = parser.add_subparsers(required=True, metavar="command")

    run = commands.add_parser("run", help="run the table daemon")
    run.add_argument("--config", type=Path, help="a TOML config file (see docs/configuration.md)")
    run.add_argument("--host", help="address to listen on (default 0.0.0.0)")
    run.add_argument("--port", type=int, help="port for the scoreboard and API (default 8000)")
    run.add_argument("--db", type=Path, help="the journal database (default ./companion.db)")
    run.add_argument("--mock-pins", action="store_true", help="use mock GPIO pins even on a Pi")
    run.set_defaults(command=cmd_run)

    demo = commands.add_parser("demo", help="try it: virtual reader, mock pins, a throw-away database")
    demo.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    demo.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    demo.add_argument("--mqtt", metavar="URL", help="publish to this broker, e.g. mqtt://127.0.0.1:1883")
    demo.add_argument("--table", help="this table's name on the broker (default: the hostname)")
    demo.set_defaults(command=cmd_demo)
    add_doctor_command(commands)  # `companion doctor`, for the Pi appliance
    add_url_command(commands)  # `companion url`: the address and a QR code for the tablet
    add_cards_commands(commands)  # `companion cards enroll | list | export | import | forget`
    add_league_command(commands)  # `companion league`: standings from the tables on a broker
    add_pair_command(commands)  # `companion pair`: a code that pairs a control device
    add_hotspot_command(commands)  # `companion hotspot on|off|auto|status`: the table's own Wi-Fi
    return parser


class StartError(Exception):
    """The daemon cannot start; one line says why."""


def cmd_run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if args.host:
        config.host = args.host
    if args.port:
        config.port = args.port
    if args.db:
        config.db = args.db
    config.mock_pins = config.mock_pins or args.mock_pins
    if not config.token:
        raise StartError(
            "no control token: set COMPANION_TOKEN or token in [server] of the config file "
            "(or try `companion demo`)"
        )
    return serve(config)


def cmd_demo(args: argparse.Namespace) -> int:
    folder = tempfile.mkdtemp(prefix="companion-demo-")
    config = load_config(None)
    config.host, config.port = args.host, args.port
    config.db = Path(folder) / "journal.db"
    config.readers = [{"device": "virtual"}]
    config.mock_pins = True
    config.token = config.token or secrets.token_urlsafe(9)
    if args.mqtt:  # a league night on one laptop: see the README
        config.mqtt = parse_mqtt({"url": args.mqtt, **({"table": args.table} if args.table else {})}, {})
    try:
        return serve(config, show_token=True, demo=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the demo's journal is thrown away


def serve(config: Config, show_token: bool = False, demo: bool = False) -> int:
    from companion.appliance.daemon import Daemon, run_power_off
    from companion.webapp.server import build_server

    try:
        daemon = Daemon(config, demo=demo)
    except ConfigError as error:  # [pins], [sound], readers: checked as the parts are built
        raise ConfigError(f"{config.source}: {error}" if config.source else str(error)) from None
    try:
        # One thread per scoreboard held open by its event stream (the broker caps them), plus
        # threads that only API calls and pages ever use (companion.webapp.server).
        server: Any = build_server(daemon.app, config.host, config.port, streams=daemon.broker.capacity)
    except OSError as error:
        daemon.close()
        raise StartError(f"cannot listen on {config.host}:{config.port}: {error.strerror}") from error
    daemon.start()
    for line in urls(config, show_token):
        print(line, flush=True)
    # systemd: READY=1, and the watchdog (which also asks the web server for the state over loopback)
    service = Service.ready(
        daemon, status=f"scoreboard on port {config.port}", listener=(config.host, config.port)
    )

    def stop(signum: int, frame: Any) -> None:
        service.stopping()
        # End the event streams first: waitress waits up to 5 s for its threads, and each open
        # scoreboard holds one. Then the whole stop takes well under the unit's 2 s budget.
        daemon.broker.close()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # The power-off gesture stops the daemon as SIGTERM does (from the buttons' thread).
    daemon.stop = lambda: _thread.interrupt_main(signal.SIGTERM)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        daemon.close()
    if daemon.powering_off.is_set():  # everything is closed, the journal too: now the command
        return run_power_off(daemon.layout.power_off_command)
    return 0


def urls(config: Config, show_token: bool) -> list[str]:
    """What the daemon prints once it listens. Only the demo prints its token: a service's output
    goes to the system log (`companion url --control` shows the control link to the host)."""
    host = config.host
    token = config.token if show_token else "<token>"
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    lines = [
        f"Table Companion {__version__}: journal {config.db}",
        f"  scoreboard: http://{shown}:{config.port}/",
        f"  control:    http://{shown}:{config.port}/control#token={token}",
    ]
    if host in ("0.0.0.0", "::"):
        lines.append(f"  on the table's network: http://{socket.gethostname()}.local:{config.port}/")
    if config.mqtt is not None:  # docs/mqtt.md
        mqtt = config.mqtt
        lines.append(f"  mqtt:       {mqtt.topic}/... on {mqtt.host}:{mqtt.port}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
