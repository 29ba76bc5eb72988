"""Which reader family a `[reader]` / `[[readers]]` entry names, by its device scheme (docs/nfc.md).

| scheme | family | module |
|---|---|---|
| `usb:`, `tty:`, `udp:` | nfcpy (RC-S380, ACR122U direct, PN532 on a UART) | `companion.readers.nfc` |
| `pcsc:<name or part>` | PC/SC readers via pcscd (ACR122U, ACR1252U, Omnikey) | `companion.readers.pcsc` |
| `hid:<evdev path>` | USB keyboard readers (UID only) | `companion.readers.keyboard` |
| `pn532:i2c1`, `pn532:spi0.0` | a PN532 board on the Pi's I2C or SPI bus | `companion.readers.pn532` |
| `rc522:spi0.0`, `rc522:spi0.1` | an RC522 (MFRC522) board on the Pi's SPI bus | `companion.readers.rc522` |
| `virtual` | the virtual mat | `companion.readers.VirtualReader` |
| `auto` | the first family that shows a reader: PC/SC, then nfcpy | |

Every family but nfcpy is a `PolledReader` (`companion.readers.base`): the tap rule, reconnects,
cues, seats and enrollment are the same code. Each family's library is imported only when an entry
uses it, so a laptop install needs none of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from companion.cues import Cue
from companion.readers import Reader
from companion.readers.base import CommonSettings, PolledReader, ReaderLost
from companion.readers.health import LinkWatch

log = logging.getLogger(__name__)

NFCPY_SCHEMES = ("usb", "tty", "udp")
FAMILY_SCHEMES = ("pcsc", "hid", "pn532", "rc522")


def scheme(device: str) -> str:
    return device.partition(":")[0].lower()


def family_reader(entry: dict[str, Any], watch: LinkWatch) -> PolledReader:
    """The reader of a `pcsc:`, `pn532:`, `rc522:` or `hid:` entry, its settings checked."""
    device = str(entry.get("device"))
    if scheme(device) == "pcsc":
        from companion.readers.pcsc import PcscReader

        common = CommonSettings.parse(entry)
        return PcscReader(common.device, common.seat, watch=watch, **common.timing())
    if scheme(device) == "pn532":
        from companion.readers.pn532 import Pn532Reader

        common = CommonSettings.parse(entry)
        return Pn532Reader(common.device, common.seat, watch=watch, **common.timing())
    if scheme(device) == "rc522":
        from companion.pins import rc522_reset_pin
        from companion.readers.rc522 import Rc522Reader

        common = CommonSettings.parse(entry, extra=("reset_pin",))
        return Rc522Reader(
            common.device, common.seat, reset_pin=rc522_reset_pin(entry), watch=watch, **common.timing()
        )
    from companion.readers.keyboard import KeyboardReader

    common = CommonSettings.parse(entry, extra=("uid_format",))
    return KeyboardReader(
        common.device, common.seat, uid_format=entry.get("uid_format", "hex"), watch=watch, **common.timing()
    )


def find_pcsc() -> str | None:
    """The first reader pcscd lists now, as a `pcsc:` device; None without pyscard or pcscd."""
    try:
        from companion.readers.pcsc import reader_names

        names = reader_names()
    except ReaderLost as why:
        log.debug("no PC/SC reader: %s", why)
        return None
    return f"pcsc:{names[0]}" if names else None


def readers_from_config(
    entries: Sequence[dict[str, Any]], announce: Callable[[Cue], None] | None = None
) -> list[Reader]:
    """One reader per entry, by its device's scheme; `announce` plays their reader-lost/back cues
    (one `LinkWatch` for the table: "reader-back" once every reader answers again)."""
    watch = LinkWatch(announce)
    readers: list[Reader] = []
    for entry in entries:
        device = str(entry.get("device", "auto"))
        family = scheme(device)
        if device == "auto":
            found = find_pcsc()
            if found is not None:
                log.info("found a PC/SC reader: %s", found)
                readers.append(family_reader({**entry, "device": found}, watch))
                continue
        if family in FAMILY_SCHEMES:
            readers.append(family_reader(entry, watch))
        else:
            from companion.readers.nfc import readers_from_config as nfcpy_readers

            readers.extend(nfcpy_readers([entry], announce, watch=watch))
    return readers


def main() -> int:
    """`python -m companion.readers.families`: print the device `auto` finds now, a PC/SC reader
    first, then an nfcpy one (the installer writes it into the config); exit status 1 if none."""
    from companion.readers.nfc import find_reader

    logging.getLogger("nfc").setLevel(logging.CRITICAL)
    found = find_pcsc() or find_reader()
    if found is None:
        return 1
    print(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
