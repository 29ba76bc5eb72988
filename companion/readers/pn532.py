"""A PN532 board on the Pi's I2C or SPI bus, through Adafruit's CircuitPython driver and Blinka
(`pn532:i2c1`, `pn532:spi0.0`; docs/nfc.md).

Adafruit's `adafruit_pn532` speaks the PN532's frames over I2C (`PN532_I2C`, address 0x24 on
Blinka's `busio.I2C`: /dev/i2c-1 on GPIO 2 SDA and 3 SCL) or SPI (`PN532_SPI` on Blinka's
`busio.SPI`: /dev/spidev0.0, SCLK GPIO 11, MOSI 10, MISO 9, the board's SS on CE0 GPIO 8, which the
kernel drives for each transfer; the driver turns the PN532's LSB-first bytes around itself). A tap
is `read_passive_target` (ISO 14443A: NTAG21x, MIFARE); the card id is read and written with the
driver's NTAG page commands (`companion.readers.ntag`). The driver reports a chip that stopped
answering as "no card", so after an empty poll the reader asks the chip for its firmware version:
no answer is a lost reader. Only the header's buses are supported (Blinka opens CE0 for SPI0).

adafruit-circuitpython-pn532 is an optional extra (`pip install 'table-companion[pn532]'`),
imported only here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.core.config import ConfigError
from companion.readers.base import NDEF_READ_WRITE, PolledReader, ReaderLost
from companion.readers.ntag import TagError, Type2Tag

log = logging.getLogger(__name__)

POLL_TIMEOUT = 0.1  # seconds `read_passive_target` waits for a tag


@dataclass(frozen=True)
class Bus:
    """One of the Pi's buses a PN532 board can sit on."""

    name: str  # after `pn532:`
    device: Path  # the kernel's device for it; missing when the bus is turned off
    label: str
    turn_on: str  # the config.txt line that turns it on


BUSES = {
    "i2c1": Bus("i2c1", Path("/dev/i2c-1"), "I2C bus 1", "dtparam=i2c_arm=on"),
    "spi0.0": Bus("spi0.0", Path("/dev/spidev0.0"), "SPI bus 0 (CE0)", "dtparam=spi=on"),
}


def bus_of(device: str) -> Bus:
    """The bus of a `pn532:` device; `ConfigError` for any other."""
    name = device.partition(":")[2].lower()
    if name not in BUSES:
        raise ConfigError(
            f"reader {device!r}: only a PN532 on i2c1 (GPIO 2/3) or spi0.0 (GPIO 8-11) is supported"
        )
    return BUSES[name]


def _driver(bus: Bus) -> Any:
    import board
    import busio

    if bus.name == "i2c1":
        from adafruit_pn532.i2c import PN532_I2C

        return PN532_I2C(busio.I2C(board.SCL, board.SDA))  # wakes it and configures the SAM
    from adafruit_pn532.spi import PN532_SPI

    # No chip-select pin of ours: spidev0.0 lowers CE0 for each transfer.
    return PN532_SPI(busio.SPI(board.SCLK, board.MOSI, board.MISO), None)


def open_pn532(bus: Bus) -> Any:
    """Adafruit's driver for the PN532 on `bus`, awake and answering; `ReaderLost` if not."""
    try:
        import adafruit_pn532  # noqa: F401 - the extra, before any bus is opened
        import busio  # noqa: F401
    except ImportError as error:
        raise ReaderLost(
            f"the PN532 driver is not installed ({error}): pip install 'table-companion[pn532]'"
        ) from None
    try:
        pn532 = _driver(bus)
        pn532.firmware_version  # noqa: B018 - raises if the chip does not answer
    except (OSError, RuntimeError, ValueError) as error:  # ValueError: nothing at 0x24
        raise ReaderLost(f"no PN532 answers on {bus.label} ({error}); is it on? ({bus.turn_on})") from None
    return pn532


def probe(device: str) -> str:
    """The PN532 of a `pn532:` device and its firmware, after waking it; `ReaderLost` saying why not."""
    bus = bus_of(device)
    if not bus.device.exists():
        raise ReaderLost(f"{bus.device} does not exist: the bus is off ({bus.turn_on})")
    chip, version, revision, _ = open_pn532(bus).firmware_version
    return f"PN5{chip:02x} v{version}.{revision} on {bus.label}"


class Pn532Reader(PolledReader):
    """A PN532 on the bus after `pn532:` (`i2c1` or `spi0.0`)."""

    kind = "pn532"
    capabilities = NDEF_READ_WRITE
    poll_interval = 0.05  # each poll also waits up to POLL_TIMEOUT in the driver

    def __init__(self, device: str, seat: int | None = None, **settings: Any) -> None:
        self._bus = bus_of(device)
        self.kind = f"pn532-{self._bus.name[:3]}"  # pn532-i2c, pn532-spi
        super().__init__(device, seat, **settings)
        self._pn532: Any = None
        self._tag: Type2Tag | None = None

    def _connect(self) -> None:
        self._pn532 = open_pn532(self._bus)

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
