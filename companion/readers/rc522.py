"""An RC522 board (NXP's MFRC522) on the Pi's SPI bus, through Joy-IT's `JoyIT_RC522` library
(`rc522:spi0.0`, `rc522:spi0.1`; docs/nfc.md).

The library is Pi My Life Up's MFRC522-python as Joy-IT ported it to gpiozero for the Pi 5: the
chip's registers over `spidev` (/dev/spidev0.0: SCLK GPIO 11, MOSI 10, MISO 9, the board's SDA/SS on
CE0 GPIO 8, or CE1 GPIO 7 for spidev0.1) and its reset pin as a gpiozero `DigitalOutputDevice`, so
it runs on lgpio where RPi.GPIO does not (docs/architecture.md says why this one). The reset pin
(`reset_pin`, GPIO 4 by default) is taken from the table's own pin factory.

The library's calls cover MIFARE Classic's single-size UIDs; an NTAG21x has a 7-byte UID, which
takes a second cascade level. So a poll is ISO/IEC 14443-3 spoken through the library's own
`MFRC522_ToCard` (its FIFO, CRC and transceive): halt the tag selected last poll, wake every tag
(WUPA), anticollision and select on cascade level 1, then level 2 if the tag says its UID goes on.
Halting and waking again is what lets a held card answer every poll: a tag that is left selected
ignores the next wake-up. Pages are read with the library's `MFRC522_Read` (16 bytes, as NTAG's
READ answers) and written with NTAG's WRITE (0xA2, one page) through `MFRC522_ToCard`.

joyit-rc522 and spidev are an optional extra (`pip install 'table-companion[rc522]'`), imported
only here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.core.config import ConfigError
from companion.pins.devices import RC522_RESET_PIN
from companion.readers.base import NDEF_READ_WRITE, PolledReader, ReaderLost
from companion.readers.ntag import TagError, Type2Tag

log = logging.getLogger(__name__)

SPEED_HZ = 1_000_000

# ISO/IEC 14443-3 and NTAG21x commands
WUPA, HLTA = 0x52, 0x50
CASCADE = (0x93, 0x95)  # SEL of cascade levels 1 and 2
CASCADE_TAG = 0x88  # the first UID byte of level 1 when the UID goes on
NTAG_WRITE = 0xA2
ACK = 0x0A
VERSION_REG = 0x37
OFF_THE_BUS = (0x00, 0xFF)  # VersionReg as a board that is not there reads (MISO held low or high)


@dataclass(frozen=True)
class Bus:
    """An SPI chip select of the Pi's header an RC522 board can sit on."""

    name: str  # after `rc522:`
    bus: int
    chip_select: int
    device: Path  # the kernel's device for it; missing while SPI is off
    label: str


BUSES = {
    "spi0.0": Bus("spi0.0", 0, 0, Path("/dev/spidev0.0"), "SPI bus 0 (CE0, GPIO 8)"),
    "spi0.1": Bus("spi0.1", 0, 1, Path("/dev/spidev0.1"), "SPI bus 0 (CE1, GPIO 7)"),
}
TURN_ON = "dtparam=spi=on"


def bus_of(device: str) -> Bus:
    """The chip select of an `rc522:` device; `ConfigError` for any other."""
    name = device.partition(":")[2].lower()
    if name not in BUSES:
        raise ConfigError(
            f"reader {device!r}: an RC522 goes on spi0.0 (CE0, GPIO 8) or spi0.1 (CE1, GPIO 7) only"
        )
    return BUSES[name]


class Rc522:
    """The chip behind Joy-IT's `MFRC522`: polls, pages, version. Its errors are `ReaderLost` (the
    board) or `TagError` (the tag)."""

    def __init__(self, bus: Bus, reset_pin: int) -> None:
        try:
            from JoyIT_RC522 import MFRC522
        except ImportError as error:
            raise ReaderLost(
                f"the RC522 library is not installed ({error}): pip install 'table-companion[rc522]'"
            ) from None
        try:
            # debugLevel: its logger prints on its own handler; we log what matters ourselves
            self.chip: Any = MFRC522(
                bus=bus.bus, device=bus.chip_select, spd=SPEED_HZ, pin_rst=reset_pin, debugLevel="CRITICAL"
            )
        except FileNotFoundError:
            raise ReaderLost(f"{bus.device} does not exist: SPI is off ({TURN_ON})") from None
        except Exception as error:  # spidev's OSError, gpiozero's errors for the reset pin
            raise ReaderLost(f"the RC522 on {bus.label} cannot be opened ({error})") from None
        self.bus = bus
        self.selected = False

    def version(self) -> int:
        return int(self.chip.Read_MFRC522(VERSION_REG))

    def check(self) -> int:
        """The chip's version; `ReaderLost` if nothing answers on the bus."""
        version = self.version()
        if version in OFF_THE_BUS:
            raise ReaderLost(f"no RC522 answers on {self.bus.label} (check its wiring and 3.3 V)")
        return version

    def init(self) -> None:
        """Reset the chip and turn its antenna on (after power came back)."""
        self.chip.MFRC522_Init()
        self.selected = False

    def close(self) -> None:
        self.chip.Close_MFRC522()
        self.chip._RST.close()  # the library never lets its reset pin go; free it for the next open

    def _transceive(self, data: list[int], with_crc: bool = True) -> tuple[list[int], int] | None:
        """Send a frame, the CRC appended; the answer and its length in bits, or None: no answer."""
        frame = data + (self.chip.CalulateCRC(data) if with_crc else [])
        status, answer, bits = self.chip.MFRC522_ToCard(self.chip.PCD_TRANSCEIVE, frame)
        return (list(answer), int(bits)) if status == self.chip.MI_OK and bits else None

    def poll(self) -> bytes | None:
        """The UID of the tag in the field now, selected; None if there is none."""
        if self.selected:
            self._transceive([HLTA, 0x00])  # no answer is its answer
            self.selected = False
        status, _ = self.chip.MFRC522_Request(WUPA)  # sets a 7-bit frame, as REQA/WUPA are
        if status != self.chip.MI_OK:
            return None
        self.chip.Write_MFRC522(self.chip.BitFramingReg, 0x00)
        uid = b""
        for select in CASCADE:
            part = self._select(select)
            if part is None:
                return None
            if part[0] != CASCADE_TAG:
                self.selected = True
                return uid + part
            uid += part[1:]
        return None

    def _select(self, select: int) -> bytes | None:
        """Anticollision and select on one cascade level: its 4 UID bytes, or None."""
        found = self._transceive([select, 0x20], with_crc=False)
        if found is None or len(found[0]) != 5:
            return None
        part = found[0]
        if part[0] ^ part[1] ^ part[2] ^ part[3] != part[4]:
            return None  # a garbled answer (two tags at once, or one at the edge of the field)
        sak = self._transceive([select, 0x70, *part])
        if sak is None or sak[1] != 24:  # SAK and its CRC
            return None
        return bytes(part[:4])

    def read_pages(self, page: int) -> bytes:
        answer = self.chip.MFRC522_Read(page)
        if answer is None or len(answer) != 16:
            raise TagError(f"page {page} could not be read")
        return bytes(answer)

    def write_page(self, page: int, data: bytes) -> None:
        answer = self._transceive([NTAG_WRITE, page, *data])
        if answer is None or answer[1] != 4 or answer[0][0] & 0x0F != ACK:
            raise TagError(f"page {page} could not be written")


def probe(device: str, reset_pin: int = RC522_RESET_PIN) -> str:
    """The RC522 of an `rc522:` device and its version; `ReaderLost` saying why not."""
    bus = bus_of(device)
    if not bus.device.exists():
        raise ReaderLost(f"{bus.device} does not exist: SPI is off ({TURN_ON})")
    chip = Rc522(bus, reset_pin)
    try:
        version = chip.check()
    finally:
        chip.close()
    return f"MFRC522 (version 0x{version:02x}) on {bus.label}, reset on GPIO {reset_pin}"


class Rc522Reader(PolledReader):
    """An RC522 on the chip select after `rc522:` (`spi0.0` or `spi0.1`)."""

    kind = "rc522"
    capabilities = NDEF_READ_WRITE
    poll_interval = 0.05

    def __init__(
        self, device: str, seat: int | None = None, *, reset_pin: int = RC522_RESET_PIN, **settings: Any
    ) -> None:
        self._bus = bus_of(device)
        super().__init__(device, seat, **settings)
        self.reset_pin = reset_pin
        self._chip: Rc522 | None = None
        self._tag: Type2Tag | None = None

    def _connect(self) -> None:
        if self._chip is None:
            self._chip = Rc522(self._bus, self.reset_pin)  # opens the bus, takes the reset pin, inits
        else:
            self._chip.init()  # a board back on the bus was powered off: set it up again
        self._chip.check()

    def _disconnect(self) -> None:
        self._tag = None  # the chip and its pin are kept for the next connect (see `stop`)

    def stop(self) -> None:
        super().stop()
        if self._chip is not None:
            self._chip.close()
            self._chip = None

    def _read(self) -> Any:
        chip = self._chip
        assert chip is not None
        try:
            uid = chip.poll()
            if uid is None:
                self._tag = None
                chip.check()  # "no tag" from a board gone from the bus too
                return None
        except OSError as error:
            raise ReaderLost(f"the RC522 stopped answering ({error})") from None
        if self._tag is not None and self._tag.uid == uid.hex():
            return self._tag  # still there: read once per tap
        self._tag = Type2Tag(uid.hex(), chip.read_pages, chip.write_page)
        return self._tag
