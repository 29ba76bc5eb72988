"""`companion doctor` checks what the table needs and says what to fix.

Doctor never changes anything: it reads the config, opens the journal read-only (no checkpoint, no
recovery written), binds the port only to see whether it is free, and asks a companion already
listening there for its /healthz. One line per check, `ok`, `warn` or `FAIL`, each FAIL or warn with
its fix; the exit status is 1 when anything FAILed. See docs/operations.md.
"""

from __future__ import annotations

import argparse
import contextlib
import grp
import json
import logging
import os
import pwd
import shutil
import socket
import sqlite3
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from companion.core.config import INSTALLED_CONFIG, Config, ConfigError, config_path, load_config
from companion.readers.registry import check_registry, registry_path
from companion.table.disk import nearest_existing, read_only_fs
from companion.table.journal import Journal, JournalError
from companion.table.wal import inspect_wal

SERVICE_USER = "companion"
SERVICE_UNIT = Path("/etc/systemd/system/companion.service")
RECENT = timedelta(days=7)  # a recovery older than this is history, not news
LOW_DISK = 50 * 2**20  # bytes free under which doctor warns
FULL_DISK = 5 * 2**20  # ... and fails: inputs are about to be refused


@dataclass
class Check:
    name: str
    status: str  # "ok", "warn" or "FAIL"
    message: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.status:<4} {self.name}: {self.message}"
        return f"{text} -> fix: {self.fix}" if self.fix and self.status != "ok" else text


def ok(name: str, message: str) -> Check:
    return Check(name, "ok", message)


def warn(name: str, message: str, fix: str) -> Check:
    return Check(name, "warn", message, fix)


def fail(name: str, message: str, fix: str) -> Check:
    return Check(name, "FAIL", message, fix)


# The commands


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


# The checks


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
        lambda: [Check("registry", *check_registry(registry_path(config)))],
        check_service,
    ]
    for step in steps:
        try:
            checks += step()
        except Exception as error:  # a check that breaks must not hide the others
            checks.append(fail("doctor", f"a check crashed: {error!r}", "report this as a bug"))
    return checks


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


def check_journal(db: Path, daemon_running: bool) -> list[Check]:
    if not db.exists():
        folder = nearest_existing(db.parent)
        if os.access(folder, os.W_OK) and not read_only_fs(folder):
            return [ok("journal", f"no journal yet at {db}: the daemon creates it on its first start")]
        return [fail("journal", f"no journal at {db}, and {folder} is not writable", f"create {db.parent}")]
    checks: list[Check] = []
    if read_only_fs(db.parent):
        checks.append(
            fail(
                "journal",
                f"the disk holding {db} is read-only: the scoreboard shows the game, every input is refused",
                "the SD card may be failing: see `dmesg`, copy the journal away (docs/operations.md), "
                "then fsck or replace the card",
            )
        )
    # A running daemon owns the WAL and may be writing it right now: only a stopped one is looked at.
    wal = None if daemon_running else inspect_wal(db)
    try:
        journal = Journal(db, read_only=True)
    except JournalError as error:
        return [*checks, fail("journal", str(error), "see 'Repairing the journal' in docs/operations.md")]
    backup = "restore the last backup (see 'Backups' in docs/operations.md)"
    try:
        integrity = journal.check()
        if integrity != "ok":
            return [*checks, fail("journal", f"SQLite integrity check of {db}: {integrity}", backup)]
        tables = journal.tables()
        if "entries" not in tables:  # the daemon creates its tables on start: nothing is lost
            return [*checks, _without_entries(db, tables)]
        summary, last = _fold(journal)
        size = _size(journal.size())
        recoveries = journal.recoveries()
    except JournalError as error:  # an entry that is not JSON, an input the rules refuse
        return [*checks, fail("journal", str(error), "see 'Repairing the journal' in docs/operations.md")]
    except sqlite3.Error as error:  # not a database at all, or a damaged one
        return [*checks, fail("journal", f"{db} cannot be read as a journal: {error}", backup)]
    finally:
        journal.close()
    checks.append(ok("journal", f"{db}: {summary}, {size}, integrity ok"))
    if wal is not None and wal.torn:
        checks.append(
            warn(
                "journal",
                f"recovered: {wal.describe()} (up to entry {last}); it was never acknowledged, "
                "so no input shown on the table is lost",
                "nothing to repair; the next start notes the recovery in the journal",
            )
        )
    if recoveries:
        at, detail = recoveries[-1]
        text = f"recovered from a torn write {len(recoveries)} time(s), last at {at}: {detail}"
        fix = "nothing was lost; if it happens again, check the power supply and the SD card"
        checks.append(warn("journal", text, fix) if _recent(at) else ok("journal", text))
    return checks


def _without_entries(db: Path, tables: list[str]) -> Check:
    """A journal file with no entries table: empty (0 bytes, or no tables), or some other database."""
    if not tables or set(tables) <= {"recoveries"}:
        return ok("journal", f"{db}: empty journal (no entries yet): the daemon sets it up on its next start")
    return warn(
        "journal",
        f"{db} holds no journal entries, only the tables {', '.join(tables)}: is it the journal?",
        "check path in [journal]; the daemon would add its entries table to this file",
    )


def _fold(journal: Journal) -> tuple[str, int]:
    """Fold the journal as the daemon will at start: a short summary and the last entry's number."""
    from companion.games.packs import playable_games
    from companion.table.table import Table

    entries = list(journal.entries())
    table = Table(journal, playable_games()[0])
    view = table.view()
    game = f"{view['game']} round {view['round']}, {view['status']}" if view.get("game") else "no game"
    last = entries[-1].seq if entries else 0
    return f"{len(entries)} entries (last {last}), {game}", last


def _size(size: dict[str, int]) -> str:
    """The journal's size on disk: the live file (about the current game) and the archive."""
    text = f"{_kib(size['bytes'])} on disk"
    if size["archived_entries"] or size["archive_bytes"]:
        text += (
            f" + archive {_kib(size['archive_bytes'])} ({size['archived_entries']} entries of finished games)"
        )
    return text


def _kib(size: int) -> str:
    return f"{size / 1024:.0f} KiB" if size < 10 * 2**20 else f"{size / 2**20:.0f} MiB"


def _recent(at: str) -> bool:
    try:
        return datetime.now(UTC) - datetime.fromisoformat(at) < RECENT
    except (ValueError, TypeError):  # not a time we wrote: say it rather than hide it
        return True


def check_disk(db: Path) -> Check:
    stats = os.statvfs(nearest_existing(db.parent))
    free = stats.f_bavail * stats.f_frsize
    text = f"{free / 2**20:.0f} MiB free for the journal"
    fix = "free some space on the SD card (`sudo apt-get clean`, `sudo journalctl --vacuum-size=50M`)"
    if free < FULL_DISK:
        return fail("disk", f"{text}: new inputs will soon be refused", fix)
    if free < LOW_DISK:
        return warn("disk", text, fix)
    return ok("disk", text)


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


def check_readers(config: Config, health: dict[str, Any] | None) -> list[Check]:
    checks: list[Check] = []
    if health is not None:  # the running daemon holds the readers: ask it, do not steal them
        for reader in health.get("readers", []):
            name = f"reader {reader.get('device')}"
            if reader.get("searching"):
                checks.append(searching(name, reader["searching"]))
            elif reader.get("connected"):
                what = ", ".join(
                    str(part) for part in (reader.get("kind"), reader.get("capabilities")) if part
                )
                checks.append(ok("reader", f"{name}: connected ({what})"))
            else:
                checks.append(
                    warn(
                        "reader",
                        f"{name}: not answering ({reader.get('error')})",
                        "check its cable; see hardware/",
                    )
                )
        return checks or [
            warn("reader", "the running companion reports no reader", "set [reader] in the config")
        ]
    kernel = [module for module in ("port100", "pn533_usb") if Path(f"/sys/module/{module}").exists()]
    if kernel:
        checks.append(
            warn(
                "reader",
                f"the kernel's {' and '.join(kernel)} driver is loaded: it takes USB readers before nfcpy",
                "install the modprobe blacklist from hardware/ (the installer does) and reboot",
            )
        )
    devices = [str(entry.get("device", "auto")) for entry in config.readers]
    usb = [device for device in devices if device == "auto" or device.startswith("usb")]
    missing = libusb_missing() if usb else None
    if missing:
        return [
            *checks,
            fail(
                "reader",
                f"libusb-1.0 is not installed ({missing}): nfcpy cannot see any USB reader",
                "sudo apt install libusb-1.0-0 (the installer does)",
            ),
        ]
    for entry in config.readers:
        checks.append(check_reader(str(entry.get("device", "auto")), entry))
    return checks


def check_reader(device: str, entry: Mapping[str, Any] | None = None) -> Check:
    """One configured reader, looked at (opened and let go) while no companion holds it; `entry` is
    its config table (the RC522's reset pin)."""
    from companion.readers.families import FAMILY_SCHEMES, scheme

    if device == "virtual":
        return ok("reader", "the virtual reader: taps come from the control page")
    if scheme(device) in FAMILY_SCHEMES:
        return check_family_reader(device, entry or {})
    if device == "auto":
        return check_auto()
    found, error = probe_nfc(device)
    if found:
        return ok("reader", f"NFC reader found: {found}")
    return fail(
        "reader",
        f"no NFC reader at {device}{f' ({error})' if error else ''}",
        "check the cable and `lsusb`; the service user needs the plugdev (USB) or dialout (serial) group",
    )


def check_auto() -> Check:
    """`auto`: what each family it searches shows now (each let go again), and what it never probes."""
    from companion.readers.families import NOT_PROBED, look_everywhere

    results = look_everywhere()
    looked = "; ".join(f"{name}: {device or 'none'}" for name, device in results)
    first = next((device for _, device in results if device), None)
    if first is not None:
        return ok("reader", f"auto looked for {looked}; it takes {first}")
    return warn(
        "reader",
        f"auto looked for {looked}: no reader found, so the virtual reader stands in while the daemon "
        f"keeps looking; never probed: {NOT_PROBED}",
        "plug in a reader (see hardware/ and docs/nfc.md), or name it in [reader] device",
    )


def searching(name: str, where: list[str]) -> Check:
    """A running daemon's `auto` reader that has found nothing yet."""
    from companion.readers.families import NOT_PROBED

    return ok(
        "reader",
        f"{name}: none found yet, looking for {'; '.join(where)}: the virtual reader stands in; "
        f"never probed: {NOT_PROBED}",
    )


FAMILY_FIXES = {
    "pcsc": "install pcscd (sudo ./systemd/install.sh --pcsc, or sudo apt install pcscd python3-pyscard); "
    "`pcsc_scan` (pcsc-tools) lists the readers pcscd sees",
    "pn532:i2c1": "turn I2C on (dtparam=i2c_arm=on in /boot/firmware/config.txt, or sudo raspi-config "
    "nonint do_i2c 0) and reboot; check the board's switches (I2C) and wiring (SDA GPIO 2, SCL GPIO 3); "
    "`i2cdetect -y 1` shows it at 24; the service user needs the i2c group",
    "pn532:spi0.0": "turn SPI on (dtparam=spi=on in /boot/firmware/config.txt, or sudo raspi-config "
    "nonint do_spi 0) and reboot; check the board's switches (SPI) and wiring (SCK GPIO 11, MOSI GPIO 10, "
    "MISO GPIO 9, SS to CE0 GPIO 8); the service user needs the spi group",
    "rc522": "turn SPI on (dtparam=spi=on in /boot/firmware/config.txt, or sudo raspi-config nonint "
    "do_spi 0) and reboot; check the wiring (SDA to CE0 GPIO 8 for spi0.0 or CE1 GPIO 7 for spi0.1, "
    "SCK GPIO 11, MOSI GPIO 10, MISO GPIO 9, RST to the reset_pin, GPIO 4 by default; 3.3 V, never "
    "5 V); the service user needs the spi and gpio groups",
    "hid": "ls -l /dev/input/by-id/ for its path; the service user needs the input group; "
    "nothing else may hold it (no other program reading the keyboard)",
}


# The line of the Pi's config.txt that turns on the bus a board reader sits on.
BUS_LINES = {"pn532:i2c1": "dtparam=i2c_arm=on", "pn532:spi0.0": "dtparam=spi=on", "rc522": "dtparam=spi=on"}
# The Pi's boot configuration: Bookworm's place, then older releases'.
BOOT_CONFIGS = (Path("/boot/firmware/config.txt"), Path("/boot/config.txt"))


def boot_config_with(line: str) -> Path | None:
    """The Pi's config.txt if it has `line` (not commented out), else None."""
    for path in BOOT_CONFIGS:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        lines = {part.split("#")[0].replace(" ", "") for part in text.splitlines()}
        return path if line in lines else None  # the first one there is the Pi's
    return None


def check_family_reader(device: str, entry: Mapping[str, Any]) -> Check:
    """A `pcsc:`, `pn532:`, `rc522:` or `hid:` reader: listed by pcscd, answering on I2C/SPI, or its
    input device present and grabbable."""
    from companion.readers.base import ReaderLost
    from companion.readers.families import scheme

    family = scheme(device)
    try:
        if family == "pcsc":
            from companion.readers.pcsc import probe as probe_pcsc

            return ok("reader", f"PC/SC reader {probe_pcsc(device)}: reads and writes the card id")
        if family == "pn532":
            from companion.readers.pn532 import probe as probe_pn532

            return ok("reader", f"{probe_pn532(device)}: reads and writes the card id")
        if family == "rc522":
            from companion.pins.devices import rc522_reset_pin
            from companion.readers.rc522 import probe as probe_rc522

            found_rc522 = probe_rc522(device, rc522_reset_pin(entry))
            return ok("reader", f"{found_rc522}: reads and writes the card id (NTAG21x)")
        from companion.readers.keyboard import probe as probe_keyboard

        found = probe_keyboard(device)
    except ReaderLost as why:
        fix = FAMILY_FIXES.get(device.lower(), FAMILY_FIXES.get(family, ""))
        line = BUS_LINES.get(device.lower(), BUS_LINES.get(family, ""))
        config = boot_config_with(line) if line and "does not exist" in str(why) else None
        if config is not None:  # turned on, but the kernel has not made the device yet
            fix = f"{config} already has {line}: reboot for the bus to appear (sudo reboot)"
        return fail("reader", f"{device}: {why}", fix)
    group = grp.getgrgid(found.stat().st_gid).gr_name
    member = _user_groups(SERVICE_USER)
    if member is not None and group not in member:
        return warn(
            "reader",
            f"{device}: grabbable, but the service user {SERVICE_USER} is not in its group {group}",
            f"sudo usermod -aG {group} {SERVICE_USER} && sudo systemctl restart companion",
        )
    return ok("reader", f"keyboard reader {found}: present and grabbed for a moment (UIDs only)")


def libusb_missing() -> str | None:
    """Why libusb-1.0 cannot be loaded (nfcpy's USB transport needs it), or None if it can."""
    try:
        import usb1

        usb1.getVersion()  # loads the C library
    except OSError as error:
        return str(error.strerror or error)
    return None


def probe_nfc(path: str, timeout: float = 5.0) -> tuple[str | None, str | None]:
    """Open and close an nfcpy reader: (its description, None) or (None, why not)."""
    result: list[tuple[str | None, str | None]] = []

    def probe() -> None:
        try:
            from companion.readers.frontend import close_frontend, open_frontend

            # nfcpy sets its own level on import; its "no reader" lines would only repeat ours.
            logging.getLogger("nfc").setLevel(logging.CRITICAL)
            # Opened and closed as the daemon does it (an ACR122U left awake, a PN532 at 115200).
            clf = open_frontend(path)
            try:
                result.append((str(clf.device), None) if clf is not None else (None, None))
            finally:
                close_frontend(clf)
        except Exception as error:  # nfcpy raises IOError, ValueError and more for a bad path
            result.append((None, str(error) or type(error).__name__))

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return result[0] if result else (None, f"no answer within {timeout:.0f} s")


def check_pins(config: Config) -> list[Check]:
    from companion.pins import devices as pins

    try:  # GPIO 14/15 count as taken when a reader is on the UART
        pins.PinLayout.of(config)
    except ConfigError as error:
        return [fail("pins", str(error), "fix [pins] in the config, see hardware/README.md")]
    factory, name = pins.choose_pin_factory(force_mock=config.mock_pins)
    with contextlib.suppress(Exception):  # only looked at: nothing of it is in use
        factory.close()
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
    checks = [ok("pins", f"GPIO through gpiozero's {name} pins")]
    device = next((d for d in (Path("/dev/gpiochip0"), Path("/dev/gpiomem")) if d.exists()), None)
    member = _user_groups(SERVICE_USER)
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


def _user_groups(user: str) -> set[str] | None:
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return None
    names = {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
    names.add(grp.getgrgid(entry.pw_gid).gr_name)
    return names


def check_overlay(db: Path, mounts: Path = Path("/proc/self/mounts")) -> list[Check]:
    """Raspberry Pi OS's overlay file system (raspi-config) keeps every write in memory: the
    journal and the card registry are gone at the next reboot, silently."""
    folder, best, volatile = str(db.parent.absolute()), "", False
    for line in mounts.read_text().splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        device, point, kind, options = fields[:4]
        inside = folder == point or folder.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best = point
            volatile = kind == "overlay" and (device == "overlayroot" or "/media/root-rw" in options)
    if not volatile:
        return []
    return [
        warn(
            "storage",
            f"{db.parent} is on the overlay file system: the journal and the card registry are lost at "
            "every reboot",
            "turn the overlay off (sudo raspi-config, Performance Options, Overlay File System), or put "
            "[journal] path on a partition the overlay leaves writable",
        )
    ]
