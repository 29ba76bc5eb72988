"""A PN532 board on the Pi's I2C or SPI bus, through Adafruit's CircuitPython driver and Blinka
(`pn532:i2c1`, `pn532:spi0.0`; docs/nfc.md).

Adafruit's `adafruit_pn532` speaks the PN532's frames over I2C (`PN532_I2C`, address 0x24 on
Blinka's `busio.I2C`: /dev/i2c-1 on GPIO 2 SDA and 3 SCL) or SPI (`PN532_SPI` on Blinka's
`busio.SPI`: /dev/spidev0.0, SCLK GPIO 11, MOSI 10, MISO 9, the board's SS on CE0 GPIO 8, which the
kernel drives for each transfer; the driver turns the PN532's LSB-first bytes around itself). A poll
is one InListPassiveTarget through the driver's `call_function` (ISO 14443A: NTAG21x, MIFARE), with
the chip told (RFConfiguration, MaxRetries) to try once and answer "no tag" rather than poll for
ever, so every poll is answered and silence means a chip gone. The card id is read with NTAG's
16-byte READ (the driver's `mifare_classic_read_block`, one InDataExchange) and only on a UID that
`KnownTags` does not know; it is written with `ntag2xx_write_block` (`companion.readers.ntag`).
Only the header's buses are supported (Blinka opens CE0 for SPI0).

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
from companion.readers.ntag import TagError, Type2Tag, identify

log = logging.getLogger(__name__)

POLL_TIMEOUT = 0.1  # seconds the driver waits for the answer to a poll (one takes a few ms)
IN_LIST_PASSIVE_TARGET, RF_CONFIGURATION = 0x4A, 0x32
MAX_RETRIES = 0x01  # activation attempts per poll: the chip answers "no tag" at once, never polls on
# The driver reads as many bytes as it is told: the answer for a 7-byte UID (NbTg, Tg, SENS_RES,
# SEL_RES, length, UID) and no more; a longer one fails its checksum and is read again in full.
TARGET_SIZE, LONG_TARGET_SIZE = 13, 64


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
    poll_interval = 0.03  # an empty poll is one answered command (~5 ms of I2C at 100 kHz)

    def __init__(self, device: str, seat: int | None = None, **settings: Any) -> None:
        self._bus = bus_of(device)
        self.kind = f"pn532-{self._bus.name[:3]}"  # pn532-i2c, pn532-spi
        super().__init__(device, seat, **settings)
        self._pn532: Any = None
        self._tag: Type2Tag | None = None

    def _connect(self) -> None:
        pn532 = open_pn532(self._bus)
        try:  # RFConfiguration, MaxRetries: MxRtyATR, MxRtyPSL, MxRtyPassiveActivation
            done = pn532.call_function(RF_CONFIGURATION, params=[0x05, 0xFF, 0x01, MAX_RETRIES])
        except (OSError, RuntimeError) as error:
            raise ReaderLost(f"the PN532 on {self._bus.label} stopped answering ({error})") from None
        if done is None:
            raise ReaderLost(f"the PN532 on {self._bus.label} did not take its poll settings")
        self._pn532 = pn532

    def _disconnect(self) -> None:
        self._pn532, self._tag = None, None

    def _read(self) -> Any:
        try:
            uid = self._poll()
        except (OSError, RuntimeError) as error:
            raise ReaderLost(f"the PN532 stopped answering ({error})") from None
        if uid is None:
            self._tag = None
            return None
        self._tag = identify(self, self._tag, uid.hex(), self._read_pages, self._write_page)
        return self._tag

    def _poll(self) -> bytes | None:
        """One InListPassiveTarget for a 106 kbps type A tag: its UID, or None. The chip tries
        MAX_RETRIES times and answers "none" (`_on_answer` sets it), so an empty poll is one answered
        command; no answer at all is a chip gone silent (`OSError`/`RuntimeError` from the driver)."""
        try:
            answer = self._list(TARGET_SIZE)
        except RuntimeError:  # a longer answer (a 10-byte UID, an ISO-DEP card's ATS) cut short
            answer = self._list(LONG_TARGET_SIZE)
        if answer is None:
            raise RuntimeError("no answer to InListPassiveTarget")
        if not answer or answer[0] == 0:
            return None
        size = answer[5] if len(answer) > 5 else 0
        if not 4 <= size <= 10 or len(answer) < 6 + size:
            return None  # a garbled answer: the next poll tries again
        return bytes(answer[6 : 6 + size])

    def _list(self, size: int) -> Any:
        return self._pn532.call_function(
            IN_LIST_PASSIVE_TARGET, params=[0x01, 0x00], response_length=size, timeout=POLL_TIMEOUT
        )

    def _read_pages(self, page: int) -> bytes:
        """NTAG's READ: the 16 bytes from `page` on, in one InDataExchange."""
        try:
            answer = self._pn532.mifare_classic_read_block(page)
        except (OSError, RuntimeError, TypeError) as error:  # TypeError: no answer at all
            raise TagError(str(error)) from None
        if answer is None or len(answer) != 16:
            raise TagError(f"pages {page}-{page + 3} could not be read")
        return bytes(answer)

    def _write_page(self, page: int, data: bytes) -> None:
        try:
            ok = self._pn532.ntag2xx_write_block(page, data)
        except (OSError, RuntimeError) as error:
            raise TagError(str(error)) from None
        if not ok:
            raise TagError(f"page {page} could not be written")
