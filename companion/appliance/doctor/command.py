"""The `companion doctor` command: its arguments, every check in its order, and the lines it prints."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.appliance.doctor.network import check_network
from companion.appliance.doctor.readers import check_readers
from companion.appliance.doctor.report import Check, fail
from companion.appliance.doctor.storage import check_disk, check_journal, check_overlay, check_registry_of
from companion.appliance.doctor.system import (
    check_config,
    check_pins,
    check_port,
    check_power_off,
    check_service,
)
from companion.core.config import INSTALLED_CONFIG, config_path


def add_doctor_command(subparsers: Any) -> None:
    """Register `companion doctor` on the CLI's subparsers."""
    doctor = subparsers.add_parser(
        "doctor", help="check the reader, the pins, the journal, the port and the config"
    )
    common_arguments(doctor)
    doctor.add_argument("--db", type=Path, help="the journal database (default: from the config)")
    doctor.set_defaults(command=cmd_doctor)


def common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", type=Path, help=f"the TOML config file (default: {INSTALLED_CONFIG} if it exists)"
    )
    parser.add_argument("--port", type=int, help="the port the daemon listens on (default: from the config)")


def cmd_doctor(args: argparse.Namespace) -> int:
    logging.getLogger().setLevel(logging.WARNING)  # the checks' own lines say it better
    checks = run_checks(args.config, args.db, args.port)
    for check in checks:
        print(check.line(), flush=True)
    failed = sum(check.status == "FAIL" for check in checks)
    warned = sum(check.status == "warn" for check in checks)
    print(f"{failed} failed, {warned} warnings, {len(checks) - failed - warned} ok")
    return 1 if failed else 0


def run_checks(given: Path | None, db: Path | None = None, port: int | None = None) -> list[Check]:
    checks: list[Check] = []
    path = config_path(given)
    config, config_checks = check_config(path)
    checks += config_checks
    if db is not None:
        config.db = db
    if port is not None:
        config.port = port
    port_check, health = check_port(config)
    running = health is not None
    steps: list[Callable[[], list[Check]]] = [
        lambda: check_journal(config.db, running),
        lambda: [check_disk(config.db)],
        lambda: check_overlay(config.db),
        lambda: [port_check],
        lambda: check_readers(config, health),
        lambda: check_pins(config),
        lambda: check_power_off(config),
        lambda: [check_registry_of(config)],
        lambda: check_network(config, health),
        check_service,
    ]
    for step in steps:
        try:
            checks += step()
        except Exception as error:  # a check that breaks must not hide the others
            checks.append(fail("doctor", f"a check crashed: {error!r}", "report this as a bug"))
    return checks
