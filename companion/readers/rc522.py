"""An RC522 board (NXP's MFRC522) on the Pi's SPI bus, through Joy-IT's `JoyIT_RC522` library
(`rc522:spi0.0`, `rc522:spi0.1`; docs/nfc.md).

The library is Pi My Life Up's MFRC522-python as Joy-IT ported it to gpiozero for the Pi 5: the
chip's registers over `spidev` (/dev/spidev0.0: SCLK GPIO 11, MOSI 10, MISO 9, the board's SDA/SS on
CE0 GPIO 8, or CE1 GPIO 7 for spidev0.1) and its reset pin as a gpiozero `DigitalOutputDevice`, so
it runs on lgpio where RPi.GPIO does not (docs/architecture.md says why this one). The reset pin
(`reset_pin`, GPIO 4 by default) is taken from the table's own pin factory.

The library's calls cover MIFARE Classic's single-size UIDs; an NTAG21x has a 7-byte UID, which
takes a second cascade level. And its `MFRC522_ToCard` waits for an answer by reading the IRQ
register up to 2,000 times, for ever past the chip's timeout (its `~` tests never see TimerIRq):
2,000 SPI transfers for each command nobody answers, every empty poll. So the exchanges are ours,
on the library's register calls (`Write_MFRC522`, `Read_MFRC522`'s addressing, bursts on its
`spi`): the frame into the FIFO, StartSend, the IRQ bits read until the answer is in or the chip's
timer (6 ms after the frame) says nobody answers, the FIFO read out; CRC_A computed here. A poll is
ISO/IEC 14443-3: a tag still selected from the last poll is asked one READ (only it can answer:
one that left the field lost its selection); else WUPA, anticollision and select on cascade level
1, then level 2 if the tag says its UID goes on. The card id is read with NTAG's 16-byte READ,
only for a UID `KnownTags` does not know, and written with NTAG's WRITE (0xA2, one page).

joyit-rc522 and spidev are an optional extra (`pip install 'table-companion[rc522]'`), imported
only here.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.core.config import ConfigError
from companion.pins.devices import RC522_RESET_PIN
from companion.readers.base import NDEF_READ_WRITE, PolledReader, ReaderLost
from companion.readers.ntag import TagError, Type2Tag, identify

log = logging.getLogger(__name__)

SPEED_HZ = 1_000_000

# ISO/IEC 14443-3 and NTAG21x commands
WUPA = 0x52
CASCADE = (0x93, 0x95)  # SEL of cascade levels 1 and 2
CASCADE_TAG = 0x88  # the first UID byte of level 1 when the UID goes on
NTAG_READ, NTAG_WRITE = 0x30, 0xA2
ACK = 0x0A

# MFRC522 registers and bits (data sheet, section 9)
COMMAND_REG, COMM_IRQ, ERROR_REG, FIFO_DATA, FIFO_LEVEL = 0x01, 0x04, 0x06, 0x09, 0x0A
CONTROL_REG, BIT_FRAMING, T_RELOAD_L, VERSION_REG = 0x0C, 0x0D, 0x2D, 0x37
TRANSCEIVE, START_SEND = 0x0C, 0x80
FIFO_SIZE = 64  # FIFOLevelReg never reads more
TX_IRQ, RX_IRQ, ERR_IRQ, TIMER_IRQ = 0x40, 0x20, 0x02, 0x01
ERRORS = 0x1B  # ErrorReg: BufferOvfl, CollErr, ParityErr, ProtocolErr (as the library checks)
OFF_THE_BUS = (0x00, 0xFF)  # VersionReg as a board that is not there reads (MISO held low or high)
# The library's init runs the timer at 2 kHz (TPrescaler 0xD3E) for 30 ticks (15 ms); 12 ticks
# (6 ms after the frame) still covers NTAG's slowest answer, a WRITE's ACK after ~4.1 ms.
TIMER_TICKS = 12
WAIT_STEP = 0.0005  # seconds between two reads of the IRQ bits while a tag answers
ANSWER_DEADLINE = 0.03  # seconds: the wait's bound should the chip's timer not run


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
        self._setup()

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
        self._setup()

    def _setup(self) -> None:
        """After the library's init: a shorter timer, so that silence is known in a few ms."""
        self.chip.Write_MFRC522(T_RELOAD_L, TIMER_TICKS)
        self.selected = False
        self.transceiving = False

    def close(self) -> None:
        self.chip.Close_MFRC522()
        self.chip._RST.close()  # the library never lets its reset pin go; free it for the next open

    # One ISO/IEC 14443 exchange, through the library's register calls and its `spidev` (bursts)

    def _burst_write(self, register: int, data: bytes) -> None:
        self.chip.spi.xfer2([(register << 1) & 0x7E, *data])

    def _burst_read(self, registers: list[int]) -> list[int]:
        """Each register's value, in one transfer (each byte clocked out names the next register)."""
        addresses = [((register << 1) & 0x7E) | 0x80 for register in registers]
        return list(self.chip.spi.xfer2([*addresses, 0]))[1:]

    def _transceive(self, frame: bytes, bits: int = 0) -> tuple[bytes, int] | None:
        """Send `frame` (its CRC_A already in it; `bits` of its last byte, 7 for WUPA, 0: all 8): the
        answer (the tag's CRC kept) and its RxLastBits, or None if nothing answered in the chip's
        timer. Six transfers when answered, five when not: the FIFO loaded, StartSend, the status
        until done, the FIFO (and RxLastBits) read out, StartSend and the IRQ bits cleared (`Read_MFRC522`/
        `Write_MFRC522` and bursts on the library's `spi`); no loop of 2,000 register reads."""
        write = self.chip.Write_MFRC522
        if not self.transceiving:  # Transceive stays the chip's command: each StartSend sends again
            write(COMMAND_REG, TRANSCEIVE)
            self.transceiving = True
        self._burst_write(FIFO_DATA, frame)
        write(BIT_FRAMING, START_SEND | bits)
        try:
            status = self._wait()
        finally:
            write(BIT_FRAMING, 0x00)
            write(COMM_IRQ, 0x7F)  # every IRQ bit cleared for the next exchange
        if not status:
            return None
        control, *answer = self._burst_read([CONTROL_REG] + [FIFO_DATA] * status)
        return bytes(answer), control & 0x07  # RxLastBits: 4 for an ACK or NAK

    def _wait(self) -> int | None:
        """Read the IRQ bits until the answer is in or the chip's timer (`TIMER_TICKS` after the
        frame) ran out: the answer's length in the FIFO, or None. A deadline bounds it again; a chip
        that never even finished sending (TxIRq) by then is gone (a board off the bus reads 0x00) or
        lost its setup (powered off and on): `OSError`, and the reader reopens it; so is one whose
        FIFO level reads impossibly high (0xFF: MISO pulled up, nothing on the bus)."""
        deadline = time.monotonic() + ANSWER_DEADLINE
        while True:
            irq, error, level = self._burst_read([COMM_IRQ, ERROR_REG, FIFO_LEVEL])
            if level > FIFO_SIZE:  # MISO held high: no chip drives it
                raise OSError(f"no RC522 answers on {self.bus.label}")
            if irq & RX_IRQ:
                return level if not error & ERRORS else None
            if irq & (TIMER_IRQ | ERR_IRQ):
                return None
            if time.monotonic() > deadline:
                if irq & TX_IRQ:
                    return None
                raise OSError(f"the RC522 on {self.bus.label} does not send (off the bus, or reset)")
            time.sleep(WAIT_STEP)

    def _exchange(self, data: bytes) -> tuple[bytes, int] | None:
        """A standard frame with its CRC_A; a data answer whose CRC_A fails is no answer."""
        answer = self._transceive(data + crc_a(data))
        if answer is None:
            return None
        body, bits = answer
        if bits == 0 and (len(body) < 3 or crc_a(body[:-2]) != body[-2:]):
            return None
        return answer

    def poll(self, held: bytes | None = None) -> bytes | None:
        """The UID of the tag in the field now, selected; None if there is none. `held`, the UID the
        last poll selected: a tag still selected answers a READ (one exchange), which only it can,
        for a tag that left the field lost its power and its selection."""
        if self.selected and held is not None and self._exchange(bytes([NTAG_READ, 0])) is not None:
            return held
        self.selected = False  # any other answer sent it back to IDLE (or HALT), where WUPA wakes it
        answer = self._transceive(bytes([WUPA]), bits=7)
        if answer is None or len(answer[0]) != 2:
            return None
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
        found = self._transceive(bytes([select, 0x20]))
        if found is None or len(found[0]) != 5:
            return None
        part = found[0]
        if part[0] ^ part[1] ^ part[2] ^ part[3] != part[4]:
            return None  # a garbled answer (two tags at once, or one at the edge of the field)
        sak = self._exchange(bytes([select, 0x70, *part]))
        if sak is None or len(sak[0]) != 3:  # SAK and its CRC
            return None
        return bytes(part[:4])

    def read_pages(self, page: int) -> bytes:
        """NTAG's READ: the 16 bytes from `page` on."""
        answer = self._exchange(bytes([NTAG_READ, page]))
        if answer is None or len(answer[0]) != 18:
            raise TagError(f"pages {page}-{page + 3} could not be read")
        return answer[0][:16]

    def write_page(self, page: int, data: bytes) -> None:
        answer = self._exchange(bytes([NTAG_WRITE, page, *data]))
        if answer is None or answer[1] != 4 or answer[0][0] & 0x0F != ACK:
            raise TagError(f"page {page} could not be written")


def crc_a(data: bytes) -> bytes:
    """ISO/IEC 14443-3 Type A CRC, low byte first (computed here: the chip's CalcCRC costs a dozen
    transfers a frame)."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = ((crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)) & 0xFFFF
    return bytes([crc & 0xFF, crc >> 8])


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
    poll_interval = 0.025  # an empty poll is 5 transfers (and ~6 ms of the chip's timer on a board)

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
        held = bytes.fromhex(self._tag.uid) if self._tag is not None else None
        try:
            uid = chip.poll(held)
        except OSError as error:  # spidev's, or VersionReg reading as a board off the bus
            raise ReaderLost(f"the RC522 stopped answering ({error})") from None
        if uid is None:
            self._tag = None
            return None
        self._tag = identify(self, self._tag, uid.hex(), chip.read_pages, chip.write_page)
        return self._tag
