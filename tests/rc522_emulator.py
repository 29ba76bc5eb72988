"""An RC522 board (NXP's MFRC522) on the Pi's SPI bus, register by register, at the bus boundary of
Joy-IT's `JoyIT_RC522` library: its `spidev.SpiDev`.

`Rc522Spi` stands in for the `spidev` module's `SpiDev` class, the one thing under the library: it
opens `/dev/spidev<bus>.<cs>` for the boards the test put on the bus (any other is the
FileNotFoundError spidev raises when SPI is off), and each `xfer2` carries the bytes an MFRC522
sees on its SPI pins: an address byte (bit 7 set: read; bits 6..1: the register), then data. A read
clocks out the addressed register in the byte after the address, as the chip does. Everything above
the bus is the library's real code: its register writes, FIFO handling, CRC and transceive loop.

For a `companion run` in another process, `SpiWire` puts the test's boards on a UNIX socket and
`WiredSpiDev` is that process's `spidev.SpiDev` (installed by a `sitecustomize` the test writes):
each transfer crosses the socket as its bytes, and the board stays in the test, where it is handled.

What the chip model does, because the library and the reader depend on it:

- the registers the library uses, with their reset values after a SoftReset (command 0x0F);
  VersionReg reads 0x92 (MFRC522 v2.0); the interrupt registers' Set1/Set2 bit semantics;
- the FIFO (FIFODataReg, FIFOLevelReg with its flush bit), CalcCRC (CRC_A into CRCResultReg),
  and Transceive, started by BitFramingReg's StartSend: the FIFO goes over the air with
  BitFramingReg's TxLastBits (7 for the short frames REQA/WUPA); the tag's answer comes back into
  the FIFO with ControlReg's RxLastBits (4 for an ACK/NAK); no answer sets TimerIRq. The CRC is not
  checked or stripped by the chip (TxModeReg/RxModeReg CRC off, as the library leaves them): the
  library appends it and the tag's answer keeps its two CRC bytes;
- the antenna (TxControlReg bits 0-1): with it off no tag is powered and all fall back to IDLE;
- answers arrive at once: the library's wait loop reads CommIrqReg once and goes on (a quirk of
  its `~` tests), which a real chip at 1 MHz usually meets too;
- a board off the bus reads 0x00 on every byte (MISO pulled down), and a board put back on it is
  powered up again: registers at their reset values, tags IDLE.

The tags are tests/pn532_emulator.py's (`Ntag`, `MifareClassic`): this module adds ISO/IEC
14443-3's states (IDLE, READY1, READY2, ACTIVE, HALT) with REQA, WUPA, the cascade levels of
anticollision and select (a 7-byte NTAG UID takes two), and HLTA; an ACTIVE tag gets the rest
(READ, WRITE...) through its `answer`. One tag is in the field at a time.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.pn532_emulator import Tag, crc_a

VERSION = 0x92  # MFRC522 version 2.0

# Registers (MFRC522 data sheet, section 9)
COMMAND, COMM_IRQ, DIV_IRQ, ERROR, STATUS2 = 0x01, 0x04, 0x05, 0x06, 0x08
FIFO_DATA, FIFO_LEVEL, CONTROL, BIT_FRAMING = 0x09, 0x0A, 0x0C, 0x0D
TX_CONTROL, CRC_RESULT_MSB, CRC_RESULT_LSB, VERSION_REG = 0x14, 0x21, 0x22, 0x37
RESET_VALUES = {COMMAND: 0x20, 0x11: 0x3F, 0x14: 0x80, 0x15: 0x00, 0x18: 0x84, 0x19: 0x4D, 0x26: 0x48}
RESET_VALUES |= {0x27: 0x88, 0x28: 0x20, 0x29: 0x20, 0x0B: 0x08, 0x24: 0x26, 0x21: 0xFF, 0x22: 0xFF}

# Commands (CommandReg bits 3..0)
IDLE, CALC_CRC, TRANSCEIVE, SOFT_RESET = 0x00, 0x03, 0x0C, 0x0F

# CommIrqReg bits
TX_IRQ, RX_IRQ, IDLE_IRQ, TIMER_IRQ = 0x40, 0x20, 0x10, 0x01
CRC_IRQ = 0x04  # DivIrqReg

REQA, WUPA, HLTA = 0x26, 0x52, 0x50
CASCADE_TAG = 0x88
SAK_MORE = 0x04  # the UID is not complete: the next cascade level follows


class State(enum.Enum):
    IDLE = "idle"
    READY1 = "ready1"
    READY2 = "ready2"
    ACTIVE = "active"
    HALT = "halt"


@dataclass
class Card:
    """A tag's ISO/IEC 14443-3 state in the field; `tag` answers once it is ACTIVE."""

    tag: Tag
    state: State = State.IDLE
    halted_before: bool = False  # woken from HALT: an error sends it back to HALT, not IDLE
    commands: list[bytes] = field(default_factory=list)

    def levels(self) -> list[bytes]:
        """The UID as anticollision hands it over: 4 bytes per cascade level (CT first if it goes on)."""
        uid = self.tag.uid
        if len(uid) == 4:
            return [uid]
        return [bytes([CASCADE_TAG]) + uid[:3], uid[3:7]]

    def short_frame(self, code: int) -> tuple[bytes, int] | None:
        woken = code == WUPA and self.state == State.HALT
        if (
            (code == REQA and self.state == State.IDLE)
            or (code == WUPA and self.state == State.IDLE)
            or woken
        ):
            self.halted_before, self.state = woken, State.READY1
            return bytes(reversed(self.tag.atqa)), 0  # ATQA, least significant byte first
        self._fall_back()
        return None

    def frame(self, data: bytes) -> tuple[bytes, int] | None:
        """The answer to a standard frame and its RxLastBits, or None: silence."""
        self.commands.append(data)
        level = {0x93: 0, 0x95: 1}.get(data[0])
        ready = {0: State.READY1, 1: State.READY2}
        if level is not None and self.state == ready[level] and level < len(self.levels()):
            return self._cascade(level, data)
        if self.state != State.ACTIVE or len(data) < 3:
            self._fall_back()
            return None
        if crc_a(data[:-2]) != data[-2:]:
            self._fall_back()
            return b"\x01", 4  # NAK: parity or CRC error
        if data[0] == HLTA:
            self.state, self.tag.selected = State.HALT, False
            return None
        answer = self.tag.answer(data[:-2])
        if answer is None or not self.tag.selected:
            self._fall_back()
        if answer is None:
            return None
        if len(answer) == 1 and answer[0] < 0x10:
            return answer, 4  # ACK (0xA) or NAK: 4 bits
        return answer + crc_a(answer), 0

    def _cascade(self, level: int, data: bytes) -> tuple[bytes, int] | None:
        part = self.levels()[level]
        bcc = part[0] ^ part[1] ^ part[2] ^ part[3]
        if data[1:] == b"\x20":  # ANTICOLLISION: the whole UID part, no CRC
            return part + bytes([bcc]), 0
        if data[1] == 0x70 and data[2:7] == part + bytes([bcc]) and crc_a(data[:7]) == data[7:9]:
            last = level == len(self.levels()) - 1
            if last:
                self.state, self.tag.selected = State.ACTIVE, True
            else:
                self.state = State.READY2
            sak = bytes([self.tag.sak if last else SAK_MORE])
            return sak + crc_a(sak), 0
        self._fall_back()
        return None

    def _fall_back(self) -> None:
        self.state = State.HALT if self.halted_before else State.IDLE
        self.tag.selected = False

    def power_off(self) -> None:
        self.state, self.halted_before, self.tag.selected = State.IDLE, False, False


class Mfrc522:
    """The chip: its registers, FIFO and the tag over its antenna."""

    def __init__(self) -> None:
        self.card: Card | None = None
        self.registers = bytearray(64)
        self.fifo: list[int] = []
        self.rx_last_bits = 0
        self.reset()

    def reset(self) -> None:
        self.registers = bytearray(64)
        for address, value in RESET_VALUES.items():
            self.registers[address] = value
        self.registers[VERSION_REG] = VERSION
        self.fifo, self.rx_last_bits = [], 0
        if self.card is not None:
            self.card.power_off()

    @property
    def field_on(self) -> bool:
        return self.registers[TX_CONTROL] & 0x03 != 0

    def read(self, address: int) -> int:
        if address == FIFO_DATA:
            return self.fifo.pop(0) if self.fifo else 0
        if address == FIFO_LEVEL:
            return min(len(self.fifo), 64)
        if address == CONTROL:
            return (self.registers[CONTROL] & 0xF8) | self.rx_last_bits
        return self.registers[address]

    def write(self, address: int, value: int) -> None:
        if address in (COMM_IRQ, DIV_IRQ):  # bit 7 says whether the marked bits are set or cleared
            marked = value & 0x7F
            old = self.registers[address]
            self.registers[address] = old | marked if value & 0x80 else old & ~marked
        elif address == FIFO_DATA:
            self.fifo.append(value)
        elif address == FIFO_LEVEL:
            if value & 0x80:
                self.fifo = []
        elif address == COMMAND:
            self._command(value)
        elif address == TX_CONTROL:
            self.registers[address] = value
            if not self.field_on and self.card is not None:
                self.card.power_off()
        elif address != VERSION_REG:
            self.registers[address] = value
            if address == BIT_FRAMING and value & 0x80 and self.registers[COMMAND] & 0x0F == TRANSCEIVE:
                self._transceive()

    def _command(self, value: int) -> None:
        command = value & 0x0F
        if command == SOFT_RESET:
            self.reset()
            return
        self.registers[COMMAND] = value
        if command == CALC_CRC:
            crc = crc_a(bytes(self.fifo))
            self.fifo = []
            self.registers[CRC_RESULT_LSB], self.registers[CRC_RESULT_MSB] = crc[0], crc[1]
            self.registers[DIV_IRQ] |= CRC_IRQ
            self.registers[COMMAND] = value & 0xF0  # back to Idle
            self.registers[COMM_IRQ] |= IDLE_IRQ

    def _transceive(self) -> None:
        sent, tx_last_bits = bytes(self.fifo), self.registers[BIT_FRAMING] & 0x07
        self.fifo, self.rx_last_bits = [], 0
        self.registers[ERROR] = 0
        answer = self._over_the_air(sent, tx_last_bits)
        if answer is None:
            self.registers[COMM_IRQ] |= TX_IRQ | TIMER_IRQ
            return
        data, self.rx_last_bits = answer
        self.fifo = list(data)
        self.registers[COMM_IRQ] |= TX_IRQ | RX_IRQ

    def _over_the_air(self, sent: bytes, tx_last_bits: int) -> tuple[bytes, int] | None:
        if self.card is None or not self.field_on or not sent:
            return None
        if tx_last_bits == 7 and len(sent) == 1:
            return self.card.short_frame(sent[0])
        return self.card.frame(sent)


class Rc522Board:
    """One RC522 board on an SPI chip select: the chip, its plug, the tag over it."""

    def __init__(self) -> None:
        self.chip = Mfrc522()
        self.plugged = True
        self.lock = threading.Lock()
        self.transfers = 0
        self.bytes = 0  # bytes clocked (each both ways at once: SPI is full duplex)

    def put(self, tag: Tag | None) -> None:
        with self.lock:
            self.chip.card = Card(tag) if tag is not None else None

    def lift(self) -> None:
        self.put(None)

    @property
    def card(self) -> Card | None:
        return self.chip.card

    def unplug(self) -> None:
        with self.lock:
            self.plugged = False

    def plug(self, *tags: Tag) -> None:
        """Back on the bus, powered up afresh (registers at reset, the antenna off), with `tags` (the
        first) over it, IDLE."""
        with self.lock:
            self.chip.card = Card(tags[0]) if tags else None
            self.chip.reset()
            self.plugged = True

    def transfer(self, data: Sequence[int]) -> list[int]:
        """One SPI transfer with chip select held low: the bytes MISO carries back."""
        with self.lock:
            self.transfers += 1
            self.bytes += len(data)
            if not self.plugged:
                return [0] * len(data)
            out = [0]
            address = data[0]
            for value in data[1:]:
                register = (address >> 1) & 0x3F
                if address & 0x80:
                    out.append(self.chip.read(register))
                    address = value  # a read burst: each byte names the next register
                else:
                    self.chip.write(register, value)
                    out.append(0)
            return out


class Rc522Spi:
    """`spidev.SpiDev` for the boards on the test's buses: `Rc522Spi.boards[(bus, cs)]`."""

    boards: dict[tuple[int, int], Rc522Board] = {}

    def __init__(self) -> None:
        self.board: Rc522Board | None = None
        self.max_speed_hz = 0
        self.mode = 0

    def open(self, bus: int, device: int) -> None:
        board = self.boards.get((bus, device))
        if board is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
        self.board = board

    def xfer2(self, data: Sequence[int], *args: Any) -> list[int]:
        if self.board is None:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        return self.board.transfer(data)

    def close(self) -> None:
        self.board = None


def on_the_bus(*where: tuple[int, int]) -> tuple[type[Rc522Spi], list[Rc522Board]]:
    """A `SpiDev` class with a fresh board on each (bus, chip select), and the boards."""
    boards = [Rc522Board() for _ in where]

    class SpiDev(Rc522Spi):
        pass

    SpiDev.boards = dict(zip(where, boards, strict=True))
    return SpiDev, boards


# The bus for a daemon in another process

WIRE_ENV = "RC522_SPI_WIRE"  # the socket's path, in the daemon's environment


class SpiWire:
    """The test's boards on a UNIX socket: one line per transfer ("open BUS CS", "xfer BUS CS HEX"),
    answered with "ok", "enoent" or the bytes MISO carried, in hex."""

    def __init__(self, path: Path, boards: dict[tuple[int, int], Rc522Board]) -> None:
        self.path, self.boards = path, boards
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(path))
        self.server.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # closed
            while True:
                connection, _ = self.server.accept()
                threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection, connection.makefile("rwb") as wire, contextlib.suppress(OSError):
            for line in wire:
                verb, bus, chip_select, *data = line.decode().split()
                board = self.boards.get((int(bus), int(chip_select)))
                if verb == "open":
                    answer = "ok" if board is not None else "enoent"
                else:
                    assert board is not None
                    answer = bytes(board.transfer(bytes.fromhex(data[0]))).hex()
                wire.write(answer.encode() + b"\n")
                wire.flush()

    def close(self) -> None:
        self.server.close()


class WiredSpiDev:
    """`spidev.SpiDev` in the daemon's process, its transfers carried by the test's `SpiWire`."""

    def __init__(self) -> None:
        self.max_speed_hz = 0
        self.mode = 0
        self._wire: Any = None
        self._where = ""

    def open(self, bus: int, device: int) -> None:
        connection = socket.socket(socket.AF_UNIX)
        connection.connect(os.environ[WIRE_ENV])
        self._wire, self._where = connection.makefile("rwb"), f"{bus} {device}"
        if self._ask(f"open {self._where}") != "ok":
            self.close()
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))

    def xfer2(self, data: Sequence[int], *args: Any) -> list[int]:
        return list(bytes.fromhex(self._ask(f"xfer {self._where} {bytes(data).hex()}")))

    def _ask(self, line: str) -> str:
        if self._wire is None:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        self._wire.write(line.encode() + b"\n")
        self._wire.flush()
        return str(self._wire.readline().decode().strip())

    def close(self) -> None:
        if self._wire is not None:
            self._wire.close()
            self._wire = None


SITECUSTOMIZE = """import spidev
from tests.rc522_emulator import WiredSpiDev
spidev.SpiDev = WiredSpiDev  # the test's SPI bus (tests/rc522_emulator.py)
"""
