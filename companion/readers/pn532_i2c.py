"""A PN532 board on the Pi's I2C bus, through Adafruit's CircuitPython driver and Blinka
(`pn532:i2c1`; docs/nfc.md).

Adafruit's `adafruit_pn532.i2c.PN532_I2C` speaks the PN532's frames over I2C (address 0x24) on
Blinka's `busio.I2C`, which on a Pi 5 (and 3/4) is /dev/i2c-1 on GPIO 2 (SDA) and 3 (SCL). A tap is
`read_passive_target` (ISO 14443A: NTAG21x, MIFARE); the card id is read and written with the
driver's NTAG page commands (`companion.readers.ntag`). The driver reports a chip that stopped
answering as "no card", so after an empty poll the reader asks the chip for its firmware version:
no answer is a lost reader. Only the header's bus (`i2c1`) is supported.

adafruit-circuitpython-pn532 is an optional extra (`pip install 'table-companion[pn532]'`),
imported only here.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from companion.config import ConfigError
from companion.readers.base import NDEF_READ_WRITE, PolledReader, ReaderLost
from companion.readers.ntag import TagError, Type2Tag

log = logging.getLogger(__name__)

BUSES = ("i2c1",)
I2C_DEVICE = Path("/dev/i2c-1")
POLL_TIMEOUT = 0.1  # seconds `read_passive_target` waits for a tag


def open_pn532() -> Any:
    """Adafruit's driver for the PN532 on I2C bus 1, awake and answering; `ReaderLost` if not."""
    try:
        import board
        import busio
        from adafruit_pn532.i2c import PN532_I2C
    except ImportError as error:
        raise ReaderLost(
            f"the PN532 driver is not installed ({error}): pip install 'table-companion[pn532]'"
        ) from None
    try:
        pn532 = PN532_I2C(busio.I2C(board.SCL, board.SDA))  # wakes it and configures the SAM
        pn532.firmware_version  # noqa: B018 - raises if the chip does not answer
    except (OSError, RuntimeError, ValueError) as error:  # ValueError: nothing at 0x24
        raise ReaderLost(
            f"no PN532 answers on I2C bus 1 ({error}); is I2C on? (dtparam=i2c_arm=on)"
        ) from None
    return pn532


def probe() -> str:
    """The PN532 on I2C bus 1 and its firmware, after waking it; `ReaderLost` saying why not."""
    if not I2C_DEVICE.exists():
        raise ReaderLost(f"{I2C_DEVICE} does not exist: I2C is off")
    chip, version, revision, _ = open_pn532().firmware_version
    return f"PN5{chip:02x} v{version}.{revision}"


class Pn532I2cReader(PolledReader):
    """A PN532 at I2C address 0x24 on the bus after `pn532:` (`i2c1`)."""

    kind = "pn532-i2c"
    capabilities = NDEF_READ_WRITE
    poll_interval = 0.05  # each poll also waits up to POLL_TIMEOUT in the driver

    def __init__(self, device: str, seat: int | None = None, **settings: Any) -> None:
        bus = device.partition(":")[2].lower()
        if bus not in BUSES:
            raise ConfigError(
                f"reader {device!r}: only a PN532 on {', '.join(BUSES)} (GPIO 2/3) is supported"
            )
        super().__init__(device, seat, **settings)
        self._pn532: Any = None
        self._tag: Type2Tag | None = None

    def _connect(self) -> None:
        self._pn532 = open_pn532()

    def _disconnect(self) -> None:
        self._pn532, self._tag = None, None

    def _read(self) -> Any:
        try:
            uid = self._pn532.read_passive_target(timeout=POLL_TIMEOUT)
            if uid is None:
                self._tag = None
                self._pn532.firmware_version  # noqa: B018 - "no card" from a chip gone silent too
                return None
        except (OSError, RuntimeError) as error:
            raise ReaderLost(f"the PN532 stopped answering ({error})") from None
        uid_hex = bytes(uid).hex()
        if self._tag is not None and self._tag.uid == uid_hex:
            return self._tag  # still there: read once per tap
        self._tag = Type2Tag(uid_hex, self._read_pages, self._write_page)
        return self._tag

    def _read_pages(self, page: int) -> bytes:
        data = b""
        for block in range(page, page + 4):
            try:
                answer = self._pn532.ntag2xx_read_block(block)
            except (OSError, RuntimeError) as error:
                raise TagError(str(error)) from None
            if answer is None:
                raise TagError(f"page {block} could not be read")
            data += bytes(answer[:4])
        return data

    def _write_page(self, page: int, data: bytes) -> None:
        try:
            ok = self._pn532.ntag2xx_write_block(page, data)
        except (OSError, RuntimeError) as error:
            raise TagError(str(error)) from None
        if not ok:
            raise TagError(f"page {page} could not be written")
