"""The card readers: as a running companion reports them (it holds them, so doctor asks it), or,
with none running, each configured one looked at here, opened and let go: `auto`'s search, the
board families (pcsc, pn532, rc522, hid) with the bus each needs, nfcpy's USB and serial readers and
what stops them all (a kernel driver that takes them, libusb missing)."""

from __future__ import annotations

import grp
import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from companion.appliance.doctor.report import Check, fail, ok, warn
from companion.appliance.doctor.system import SERVICE_USER, user_groups
from companion.core.config import Config

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
# The kernel's NFC drivers that claim USB readers before nfcpy can.
KERNEL_DRIVERS = ("port100", "pn533_usb")


def check_readers(config: Config, health: dict[str, Any] | None) -> list[Check]:
    if health is not None:  # the running daemon holds the readers: ask it, do not steal them
        return _reported_readers(health)
    return _readers_here(config)


# What a running companion reports


def _reported_readers(health: dict[str, Any]) -> list[Check]:
    """Each reader in the running companion's /healthz."""
    checks = [_reported_reader(reader) for reader in health.get("readers", [])]
    return checks or [warn("reader", "the running companion reports no reader", "set [reader] in the config")]


def _reported_reader(reader: Mapping[str, Any]) -> Check:
    name = f"reader {reader.get('device')}"
    if reader.get("searching"):
        return searching(name, reader["searching"])
    if reader.get("connected"):
        what = ", ".join(str(part) for part in (reader.get("kind"), reader.get("capabilities")) if part)
        return ok("reader", f"{name}: connected ({what})")
    return warn("reader", f"{name}: not answering ({reader.get('error')})", "check its cable; see hardware/")


def searching(name: str, where: list[str]) -> Check:
    """A running daemon's `auto` reader that has found nothing yet."""
    from companion.readers.families import NOT_PROBED

    return ok(
        "reader",
        f"{name}: none found yet, looking for {'; '.join(where)}: the virtual reader stands in; "
        f"never probed: {NOT_PROBED}",
    )


# Looked at here, while no companion holds them


def _readers_here(config: Config) -> list[Check]:
    """The configured readers, each opened and let go, unless libusb is missing for a USB one."""
    checks = _kernel_drivers()
    missing = _libusb([str(entry.get("device", "auto")) for entry in config.readers])
    if missing is not None:
        return [*checks, missing]
    return [*checks, *(check_reader(str(entry.get("device", "auto")), entry) for entry in config.readers)]


def _kernel_drivers() -> list[Check]:
    """A kernel NFC driver loaded takes the USB readers before nfcpy does."""
    kernel = [module for module in KERNEL_DRIVERS if Path(f"/sys/module/{module}").exists()]
    if not kernel:
        return []
    return [
        warn(
            "reader",
            f"the kernel's {' and '.join(kernel)} driver is loaded: it takes USB readers before nfcpy",
            "install the modprobe blacklist from hardware/ (the installer does) and reboot",
        )
    ]


def _libusb(devices: list[str]) -> Check | None:
    """A FAIL when a USB reader (or `auto`) is configured and libusb-1.0 cannot be loaded."""
    usb = [device for device in devices if device == "auto" or device.startswith("usb")]
    missing = libusb_missing() if usb else None
    if not missing:
        return None
    return fail(
        "reader",
        f"libusb-1.0 is not installed ({missing}): nfcpy cannot see any USB reader",
        "sudo apt install libusb-1.0-0 (the installer does)",
    )


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
        return fail("reader", f"{device}: {why}", _family_fix(device, family, str(why)))
    group = grp.getgrgid(found.stat().st_gid).gr_name
    member = user_groups(SERVICE_USER)
    if member is not None and group not in member:
        return warn(
            "reader",
            f"{device}: grabbable, but the service user {SERVICE_USER} is not in its group {group}",
            f"sudo usermod -aG {group} {SERVICE_USER} && sudo systemctl restart companion",
        )
    return ok("reader", f"keyboard reader {found}: present and grabbed for a moment (UIDs only)")


def _family_fix(device: str, family: str, why: str) -> str:
    """The fix for a family reader that did not answer: its bus, wiring and group; only a reboot
    when config.txt turns its bus on already but the kernel has not made the device yet."""
    line = BUS_LINES.get(device.lower(), BUS_LINES.get(family, ""))
    config = boot_config_with(line) if line and "does not exist" in why else None
    if config is not None:  # turned on, but the kernel has not made the device yet
        return f"{config} already has {line}: reboot for the bus to appear (sudo reboot)"
    return FAMILY_FIXES.get(device.lower(), FAMILY_FIXES.get(family, ""))


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
