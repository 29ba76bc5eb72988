"""A PN532 board on an I2C or SPI bus, at the bus boundary of Adafruit's driver (`busio.I2C`,
`busio.SPI`).

`Pn532I2cBus` stands in for Blinka's `busio.I2C`: the calls Adafruit's `adafruit_bus_device`
makes (`try_lock`, `unlock`, `writeto`, `readfrom_into`) reach the chip of tests/pn532_emulator.py
as the bytes a PN532 receives on I2C at address 0x24. A read starts with the PN532's status byte
(0x01 once an answer is ready, else 0x00) followed by the next pending frame, the ACK first, then
the answer, as the chip clocks them out. Everything above the bus is Adafruit's real driver.

Two things of the real chip that its serial emulation does not need are modelled here: a poll
(InListPassiveTarget) with no tag in the field is never answered (the PN532 retries for ever by
default, and Adafruit's driver never changes that: it times out and asks again), and a board pulled
off the bus makes every transfer fail with EREMOTEIO, as Linux's i2c-dev reports a missing device.

`Pn532SpiBus` stands in for Blinka's `busio.SPI` the same way, under `adafruit_bus_device`'s
`SPIDevice` (`try_lock`, `configure`, `write`, `write_readinto`, `unlock`). The bytes are the
PN532's SPI frames as the wire carries them to an MSB-first SPI controller: every byte bit-reversed
(the chip is LSB-first), each transfer led by the host's DW (0x01: a frame follows), SR (0x02: the
chip answers its status, 0x01 when ready) or DR (0x03: the chip clocks out the pending frame). SPI
has no acknowledge: a board off the bus leaves MISO high (0xFF) and every transfer "succeeds".
"""

from __future__ import annotations

import errno
import os
import threading
from typing import Any

from tests.pn532_emulator import ACK, Pn532Chip, Tag

ADDRESS = 0x24


class PollingForEver(Pn532Chip):
    """The chip with its default MxRtyPassiveActivation (0xFF): an empty poll has no answer. An
    RFConfiguration MaxRetries (item 5) with a finite MxRtyPassiveActivation makes it answer "no
    target" once it has tried that often, as the real chip does."""

    def __init__(self) -> None:
        super().__init__()
        self.passive_retries = 0xFF

    def _command(self, data: bytes) -> tuple[bytes, float]:
        if len(data) >= 6 and data[1] == 0x32 and data[2] == 0x05:
            self.passive_retries = data[5]
        answer, spent = super()._command(data)
        if len(data) >= 2 and data[1] == 0x4A and self.active is None and self.passive_retries == 0xFF:
            return ACK, spent  # still looking
        return answer, spent


class Pn532Board:
    """One PN532 on a bus: the tags over it, the bus's plug, the frames it has yet to hand over."""

    def __init__(self) -> None:
        self.chip = PollingForEver()
        self.plugged = True
        self.pending: list[bytes] = []
        self.lock = threading.Lock()
        self.transfers = 0
        self.bytes = 0  # bytes clocked over the bus, both ways

    # The tags

    def put(self, *tags: Tag) -> None:
        with self.lock:
            self.chip.tags = list(tags)

    def lift(self) -> None:
        self.put()

    def unplug(self) -> None:
        with self.lock:
            self.plugged = False
            self.pending = []
            self.chip = PollingForEver()  # powered off: whatever it was doing is gone
            self.chip.tags = []

    def plug(self, *tags: Tag) -> None:
        with self.lock:
            self.chip.tags = list(tags)
            self.plugged = True

    def _take(self, data: bytes) -> None:
        """A frame from the host: the chip's ACK and answer become the pending frames."""
        self.pending = []  # a new command: whatever was not read is dropped
        answer, _ = self.chip.receive(data)
        self.chip.after_answer()
        if answer.startswith(ACK):
            self.pending = [ACK, answer[len(ACK) :]] if len(answer) > len(ACK) else [ACK]
        elif answer:
            self.pending = [answer]

    def try_lock(self) -> bool:
        return True

    def unlock(self) -> None:
        pass

    def deinit(self) -> None:
        pass


class Pn532I2cBus(Pn532Board):
    """`busio.I2C(scl, sda)` with one PN532 on it."""

    def __call__(self, scl: Any = None, sda: Any = None, **kwargs: Any) -> Pn532I2cBus:
        """`busio.I2C(board.SCL, board.SDA)`: this bus."""
        return self

    # busio.I2C

    def writeto(self, address: int, buffer: Any, *, start: int = 0, end: int | None = None) -> None:
        with self.lock:
            self._check(address)
            data = bytes(buffer[start:end])
            self.bytes += len(data)
            if not data:
                return  # a probe: the address answered
            self._take(data)

    def readfrom_into(self, address: int, buffer: Any, *, start: int = 0, end: int | None = None) -> None:
        with self.lock:
            self._check(address)
            end = len(buffer) if end is None else end
            size = end - start
            self.bytes += size
            if not self.pending:
                buffer[start:end] = bytes(size)  # status 0x00: busy
                return
            if size == 1:
                buffer[start] = 0x01  # ready; the frame stays for the next read
                return
            data = b"\x01" + self.pending.pop(0)
            buffer[start:end] = (data + bytes(size))[:size]

    def _check(self, address: int) -> None:
        self.transfers += 1
        if not self.plugged or address != ADDRESS:
            raise OSError(errno.EREMOTEIO, os.strerror(errno.EREMOTEIO))


def reversed_bits(data: bytes) -> bytes:
    """Each byte with its bit order turned round: LSB-first on an MSB-first controller."""
    return bytes(int(f"{byte:08b}"[::-1], 2) for byte in data)


DATA_WRITE, STATUS_READ, DATA_READ = 0x01, 0x02, 0x03


class Pn532SpiBus(Pn532Board):
    """`busio.SPI(clock, MOSI, MISO)` with one PN532 on its CE0."""

    def __call__(self, *pins: Any, **kwargs: Any) -> Pn532SpiBus:
        """`busio.SPI(board.SCLK, board.MOSI, board.MISO)`: this bus."""
        return self

    # busio.SPI

    def configure(self, *, baudrate: int = 100000, polarity: int = 0, phase: int = 0, bits: int = 8) -> None:
        assert (polarity, phase, bits) == (0, 0, 8), "the PN532 takes SPI mode 0, 8-bit words"

    def write(self, buffer: Any, *, start: int = 0, end: int | None = None) -> None:
        with self.lock:
            self.transfers += 1
            data = reversed_bits(bytes(buffer[start:end]))
            self.bytes += len(data)
            if not self.plugged or not data or data[0] != DATA_WRITE:
                return  # nobody there, or the wake-up byte: it only lowers CS
            self._take(data[1:])

    def write_readinto(self, out: Any, into: Any, **kwargs: Any) -> None:
        with self.lock:
            self.transfers += 1
            sent = reversed_bits(bytes(out))
            self.bytes += len(sent)
            if not self.plugged:
                into[:] = b"\xff" * len(into)  # MISO pulled high, nothing driving it
                return
            if sent[0] == STATUS_READ:
                answer = b"\x00" + (b"\x01" if self.pending else b"\x00")
            elif sent[0] == DATA_READ and self.pending:
                answer = b"\x00" + self.pending.pop(0)
            else:
                answer = b""
            into[:] = reversed_bits((answer + bytes(len(into)))[: len(into)])
