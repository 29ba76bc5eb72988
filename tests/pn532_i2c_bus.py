"""A PN532 board on an I2C bus, at the bus boundary of Adafruit's driver (`busio.I2C`).

`Pn532I2cBus` stands in for Blinka's `busio.I2C`: the calls Adafruit's `adafruit_bus_device`
makes (`try_lock`, `unlock`, `writeto`, `readfrom_into`) reach the chip of tests/pn532_emulator.py
as the bytes a PN532 receives on I2C at address 0x24. A read starts with the PN532's status byte
(0x01 once an answer is ready, else 0x00) followed by the next pending frame, the ACK first, then
the answer, as the chip clocks them out. Everything above the bus is Adafruit's real driver.

Two things of the real chip that its serial emulation does not need are modelled here: a poll
(InListPassiveTarget) with no tag in the field is never answered (the PN532 retries for ever by
default, and Adafruit's driver never changes that: it times out and asks again), and a board pulled
off the bus makes every transfer fail with EREMOTEIO, as Linux's i2c-dev reports a missing device.
"""

from __future__ import annotations

import errno
import os
import threading
from typing import Any

from tests.pn532_emulator import ACK, Pn532Chip, Tag

ADDRESS = 0x24


class PollingForEver(Pn532Chip):
    """The chip with its default MxRtyPassiveActivation (0xFF): an empty poll has no answer."""

    def _command(self, data: bytes) -> tuple[bytes, float]:
        answer, spent = super()._command(data)
        if len(data) >= 2 and data[1] == 0x4A and self.active is None:
            return ACK, spent  # still looking
        return answer, spent


class Pn532I2cBus:
    """`busio.I2C(scl, sda)` with one PN532 on it."""

    def __init__(self) -> None:
        self.chip = PollingForEver()
        self.plugged = True
        self.pending: list[bytes] = []
        self.lock = threading.Lock()
        self.transfers = 0

    def __call__(self, scl: Any = None, sda: Any = None, **kwargs: Any) -> Pn532I2cBus:
        """`busio.I2C(board.SCL, board.SDA)`: this bus."""
        return self

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

    # busio.I2C

    def try_lock(self) -> bool:
        return True

    def unlock(self) -> None:
        pass

    def deinit(self) -> None:
        pass

    def writeto(self, address: int, buffer: Any, *, start: int = 0, end: int | None = None) -> None:
        with self.lock:
            self._check(address)
            data = bytes(buffer[start:end])
            if not data:
                return  # a probe: the address answered
            self.pending = []  # a new command: whatever was not read is dropped
            answer, _ = self.chip.receive(data)
            self.chip.after_answer()
            if answer.startswith(ACK):
                self.pending = [ACK, answer[len(ACK) :]] if len(answer) > len(ACK) else [ACK]
            elif answer:
                self.pending = [answer]

    def readfrom_into(self, address: int, buffer: Any, *, start: int = 0, end: int | None = None) -> None:
        with self.lock:
            self._check(address)
            end = len(buffer) if end is None else end
            size = end - start
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
