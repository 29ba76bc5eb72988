"""A PN532 on a serial line, emulated on a pseudo-terminal, for nfcpy's own `pn532`/`pn53x` driver.

The emulator is the chip at the far end of the UART: it reads the host's frames from the master side
of a pty (`os.openpty`) and answers them as a PN532 does, so the reader under test opens the slave
side with nfcpy's real driver code (serial transport, `pn532.Chipset`, `pn53x.Device`, the Type 2 tag
classes) and nothing above the wire is replaced. The slave is reached through a symlink named like a
USB-serial adapter (`<dir>/ttyUSB0`), the path the daemon is given as `tty:<dir>/ttyUSB0:pn532`.

What it models, because the reader's recovery depends on it:

- the frame protocol: normal and extended information frames, ACK frames from either side, error
  frames for a command it does not know; the wake-up preamble (leading 0x00/0x55 bytes);
- the commands nfcpy sends: Diagnose, GetFirmwareVersion, SAMConfiguration, SetParameters,
  RFConfiguration, ReadRegister/WriteRegister (CIU_FIFOData still holding the REQA when nothing
  answered), InListPassiveTarget (106A; other kinds find nothing), InCommunicateThru (Type 2 tag
  commands, with the CRC_A bytes the driver checks itself), InDataExchange, InRelease, PowerDown,
  SetSerialBaudRate;
- the baud rate as chip state: bytes sent at a rate other than the chip's are garbage to it and
  ignored; a chip switched to 921600 stays there until told otherwise or powered off. The host's
  rate is read from the pty's termios (the master side reports the slave's settings), so nothing
  in the reader is told about the emulator;
- a power cycle only on `unplug()`/`plug()` (a USB-serial adapter pulled out); a reader process
  that dies (kill -9) leaves the chip as it was, like a board on the Pi's 5 V;
- the time a frame takes on the wire at the chip's rate (10 bits a byte) and a few milliseconds of
  chip time per poll that finds nothing (counted in `stats`; `stats.exchanges` logs every command
  with its bytes both ways, its line time and whether a poll activated a tag, which the reader
  traffic tests and bench/reader_traffic_nfcpy.py count).

Tags in the field: `Ntag` (NTAG213/215/216: GET_VERSION, READ, WRITE, pages as NXP lays them out)
and `MifareClassic` (SAK 0x08: without authentication every command is refused with a NAK).
"""

from __future__ import annotations

import contextlib
import os
import select
import termios
import threading
import time
import tty
from dataclasses import dataclass, field
from pathlib import Path

ACK = bytes.fromhex("0000ff00ff00")
NAK_4BIT = b"\x04"  # a tag's refusal (4 bits); nfcpy's Type 2 code reads it as one byte
POLL_TIME = 0.004  # seconds the chip spends on an InListPassiveTarget that finds nothing (model)
CHIP_TIME = 0.0005  # seconds of chip time for any other command (model)
BAUDS = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1288000)
SPEEDS = {getattr(termios, f"B{rate}"): rate for rate in BAUDS if hasattr(termios, f"B{rate}")}


def crc_a(data: bytes) -> bytes:
    """ISO/IEC 14443-3 Type A CRC, low byte first."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = ((crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)) & 0xFFFF
    return bytes([crc & 0xFF, crc >> 8])


def ndef_tlv(message: bytes) -> bytes:
    """An NDEF message TLV and the terminator TLV, as a Type 2 tag holds them."""
    length = bytes([len(message)]) if len(message) < 255 else b"\xff" + len(message).to_bytes(2, "big")
    return b"\x03" + length + message + b"\xfe"


def text_message(text: str) -> bytes:
    import ndef

    return b"".join(ndef.message_encoder([ndef.TextRecord(text, "en")]))


# Tags


class Tag:
    """A 106A tag in the field. `selected` is its ISO 14443-3 state: only a selected tag answers."""

    uid: bytes
    atqa: bytes  # as the PN532 reports SENS_RES: most significant byte first
    sak: int

    def __init__(self) -> None:
        self.selected = False
        self.commands: list[bytes] = []

    def answer(self, command: bytes) -> bytes | None:
        """The tag's answer to a command (without CRC), or None: no answer."""
        raise NotImplementedError

    def refuse(self) -> bytes:
        self.selected = False  # a Type 2 tag (and a Classic) falls back to IDLE after a NAK
        return NAK_4BIT

    def data_reads(self) -> list[int]:
        """The pages of the data area (4 on) this tag was asked to READ, in order (not the READ of
        page 0 that checks a held tag still answers, selected)."""
        return [command[1] for command in self.commands if command[0] == 0x30 and command[1] >= 4]


NTAG_MODELS = {213: (0x0F, 45, 0x12), 215: (0x11, 135, 0x3E), 216: (0x13, 231, 0x6D)}


class Ntag(Tag):
    """An NXP NTAG213/215/216: 7-byte UID, capability container on page 3, user memory from page 4.

    `data` is what the user memory holds (default: an empty NDEF message, as the tags are sold);
    `torn=True` cuts an NDEF message short, as a write interrupted by lifting the tag leaves it."""

    atqa = b"\x00\x44"
    sak = 0x00

    def __init__(
        self, uid: str, model: int = 213, *, text: str | None = None, data: bytes | None = None
    ) -> None:
        super().__init__()
        self.uid = bytes.fromhex(uid)
        assert len(self.uid) == 7 and self.uid[0] == 0x04, "an NXP 7-byte UID starts with 04"
        self.model = model
        storage, pages, cc_size = NTAG_MODELS[model]
        self.version = bytes([0x00, 0x04, 0x04, 0x02, 0x01, 0x00, storage, 0x03])
        self.user_pages = range(4, 4 + cc_size * 2)  # CC size is in 8-byte units, a page is 4 bytes
        self.memory = bytearray(pages * 4)
        u = self.uid
        self.memory[0:4] = bytes([u[0], u[1], u[2], 0x88 ^ u[0] ^ u[1] ^ u[2]])
        self.memory[4:8] = u[3:7]
        self.memory[8:12] = bytes([u[3] ^ u[4] ^ u[5] ^ u[6], 0x48, 0x00, 0x00])
        self.memory[12:16] = bytes([0xE1, 0x10, cc_size, 0x00])
        if data is None:
            data = ndef_tlv(text_message(text)) if text is not None else ndef_tlv(b"")
        self.memory[16 : 16 + len(data)] = data

    @property
    def pages(self) -> int:
        return len(self.memory) // 4

    def answer(self, command: bytes) -> bytes | None:
        if not self.selected:
            return None
        self.commands.append(command)
        code = command[0]
        if code == 0x60 and len(command) == 1:  # GET_VERSION
            return self.version
        if code == 0x30 and len(command) == 2 and command[1] < self.pages:  # READ: 4 pages, wrapping
            start = command[1] * 4
            return bytes((self.memory * 2)[start : start + 16])
        if code == 0xA2 and len(command) == 6 and command[1] in self.user_pages:  # WRITE one page
            self.memory[command[1] * 4 : command[1] * 4 + 4] = command[2:6]
            return b"\x0a"  # ACK
        if code == 0x3C and len(command) == 2:  # READ_SIG
            return bytes(32)
        return self.refuse()

    def user_data(self) -> bytes:
        return bytes(self.memory[16 : 16 + len(self.user_pages) * 4])


def numbered_ntag(number: int, card: str | None = None) -> Ntag:
    """An NTAG213 with the UID 04 00.. `number`, holding `card` as its card id (None: blank)."""
    data = ndef_tlv(text_message(card)) if card else None
    return Ntag(f"04{number:012x}", 213, data=data)


class MifareClassic(Tag):
    """A MIFARE Classic 1K: 4-byte UID, SAK 0x08. Its memory needs an authentication nfcpy never
    attempts, so every command it gets is refused with a NAK."""

    atqa = b"\x00\x04"
    sak = 0x08

    def __init__(self, uid: str) -> None:
        super().__init__()
        self.uid = bytes.fromhex(uid)
        assert len(self.uid) == 4

    def answer(self, command: bytes) -> bytes | None:
        if not self.selected:
            return None
        self.commands.append(command)
        return self.refuse()


# The chip


@dataclass
class Stats:
    """What crossed the serial line, both ways."""

    frames_in: int = 0
    frames_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    line_seconds: float = 0.0  # time on the wire at the chip's rate, plus modelled chip time
    garbage: int = 0  # bytes received at a rate other than the chip's
    commands: list[int] = field(default_factory=list)  # command codes, in order
    polls: list[int] = field(default_factory=list)  # InListPassiveTarget BrTy values, in order
    found: list[tuple[int, int, int, int, float]] = field(default_factory=list)
    """A snapshot (frames in, frames out, bytes in, bytes out, line seconds) at each poll that found
    a tag, taken before that poll's own frames are counted: what a tap costs is measured from it."""

    exchanges: list[Exchange] = field(default_factory=list)  # every command, in order, with its cost

    def snapshot(self) -> tuple[int, int, int, int, float]:
        return (self.frames_in, self.frames_out, self.bytes_in, self.bytes_out, self.line_seconds)


@dataclass(frozen=True)
class Exchange:
    """One host command on the line: its code and arguments, the bytes both ways (the command frame
    with whatever preceded it, the chip's ACK and answer) and the line time they take at the chip's
    rate plus the modelled chip time. Three frames each: the command, the ACK, the answer."""

    code: int
    args: bytes
    bytes_in: int
    bytes_out: int
    seconds: float
    at: float = 0.0  # time.perf_counter() when the chip read the command
    found: bool = False  # an InListPassiveTarget that activated a tag

    frames = 3

    @property
    def bytes(self) -> int:
        return self.bytes_in + self.bytes_out


def frame(data: bytes) -> bytes:
    """A PN532 information frame carrying `data` (TFI included): normal, or extended past 254."""
    if len(data) <= 254:
        head = b"\x00\x00\xff" + bytes([len(data), (-len(data)) & 0xFF])
    else:
        size = len(data).to_bytes(2, "big")
        head = b"\x00\x00\xff\xff\xff" + size + bytes([(-sum(size)) & 0xFF])
    return head + data + bytes([(-sum(data)) & 0xFF, 0x00])


ERROR_FRAME = bytes.fromhex("0000ff01ff7f8100")


class Pn532Chip:
    """The PN532's host interface and its field. Feed it what the host sent; it returns its answer."""

    def __init__(self) -> None:
        self.baud = 115200
        self.asleep = False
        self.field_on = False
        self.tags: list[Tag] = []
        self.registers: dict[int, int] = {}
        self.buffer = bytearray()
        self.stats = Stats()
        self.wake_ups = 0
        self.power_downs = 0
        self.active: Tag | None = None
        self.fifo_reqa = True  # CIU_FIFOData still holds the REQA: nothing answered the last poll
        self.activated = False  # the command being answered activated a tag (`Exchange.found`)

    def receive(self, data: bytes) -> tuple[bytes, float]:
        """Bytes from the host (at the chip's rate); returns the answer and the chip time it took."""
        self.stats.bytes_in += len(data)
        if self.asleep:
            self.asleep = False  # HSU wake-up: any traffic wakes it; the frame that follows is read
            self.wake_ups += 1
        self.buffer += data
        out, busy = b"", 0.0
        while True:
            waiting = len(self.buffer)
            parsed = self._next_frame()
            if parsed is None:
                return out, busy
            if parsed == b"ack":
                continue  # the host's ACK: cancels a pending answer or confirms a baud change
            self.stats.frames_in += 1
            at, self.activated = time.perf_counter(), False
            answer, spent = self._command(parsed)
            sent = waiting - len(self.buffer)
            seconds = (sent + len(answer)) * 10 / self.baud + spent
            code = parsed[1] if len(parsed) > 1 else -1
            exchange = Exchange(code, parsed[2:], sent, len(answer), seconds, at, self.activated)
            self.stats.exchanges.append(exchange)
            out += answer
            busy += spent

    def _next_frame(self) -> bytes | None:
        buf = self.buffer
        start = buf.find(b"\x00\xff")
        if start < 0 or len(buf) < start + 4:
            return None
        body = start + 2
        if buf[body : body + 2] == b"\x00\xff":  # ACK
            del buf[: body + 2]
            return b"ack"
        if buf[body : body + 2] == b"\xff\xff":  # extended frame
            if len(buf) < body + 5:
                return None
            length, head = int.from_bytes(buf[body + 2 : body + 4], "big"), body + 5
        else:
            if (buf[body] + buf[body + 1]) & 0xFF:
                del buf[:body]  # not a frame header: skip and look again
                return self._next_frame()
            length, head = buf[body], body + 2
        if len(buf) < head + length + 2:
            return None
        data = bytes(buf[head : head + length])
        del buf[: head + length + 2]
        return data

    def _command(self, data: bytes) -> tuple[bytes, float]:
        if len(data) < 2 or data[0] != 0xD4:
            return ACK + ERROR_FRAME, CHIP_TIME
        code, args = data[1], data[2:]
        self.stats.commands.append(code)
        self.stats.frames_out += 2  # the ACK, then the answer
        handler = getattr(self, f"_cmd_{code:02x}", None)
        if handler is None:
            return ACK + ERROR_FRAME, CHIP_TIME
        reply, spent = handler(args)
        return ACK + frame(bytes([0xD5, code + 1]) + reply), spent

    # The commands (named by code), each returning (response data, chip time)

    def _cmd_00(self, args: bytes) -> tuple[bytes, float]:  # Diagnose: the line test echoes
        return args, CHIP_TIME

    def _cmd_02(self, args: bytes) -> tuple[bytes, float]:  # GetFirmwareVersion: PN532 v1.6
        return bytes([0x32, 0x01, 0x06, 0x07]), CHIP_TIME

    def _cmd_06(self, args: bytes) -> tuple[bytes, float]:  # ReadRegister
        values = []
        for i in range(0, len(args) - 1, 2):
            address = int.from_bytes(args[i : i + 2], "big")
            if address == 0x6339:  # CIU_FIFOData
                values.append(0x26 if self.fifo_reqa else 0x00)
            else:
                values.append(self.registers.get(address, 0))
        return bytes(values), CHIP_TIME

    def _cmd_08(self, args: bytes) -> tuple[bytes, float]:  # WriteRegister
        for i in range(0, len(args) - 2, 3):
            self.registers[int.from_bytes(args[i : i + 2], "big")] = args[i + 2]
        return b"", CHIP_TIME

    def _cmd_10(self, args: bytes) -> tuple[bytes, float]:  # SetSerialBaudRate
        self.new_baud = BAUDS[args[0]]
        return b"", CHIP_TIME

    def _cmd_12(self, args: bytes) -> tuple[bytes, float]:  # SetParameters
        return b"", CHIP_TIME

    def _cmd_14(self, args: bytes) -> tuple[bytes, float]:  # SAMConfiguration
        return b"", CHIP_TIME

    def _cmd_16(self, args: bytes) -> tuple[bytes, float]:  # PowerDown (asleep once answered)
        self.power_downs += 1
        self.going_to_sleep = True
        return b"\x00", CHIP_TIME

    def _cmd_32(self, args: bytes) -> tuple[bytes, float]:  # RFConfiguration
        if args[:1] == b"\x01":  # RF field: bit 0 on/off
            self._field(bool(args[1] & 1))
        return b"", CHIP_TIME

    def _cmd_4a(self, args: bytes) -> tuple[bytes, float]:  # InListPassiveTarget
        brty, wanted = args[1], args[2:]
        self.stats.polls.append(brty)
        self._field(True)
        found = self._select(wanted) if brty == 0 else None
        if found is not None and not wanted:  # a poll (not a presence check by UID) met a tag
            self.stats.found.append(self.stats.snapshot())
        self.fifo_reqa = found is None
        self.activated = found is not None
        if found is None:
            return b"\x00", POLL_TIME
        target = found.atqa + bytes([found.sak, len(found.uid)]) + found.uid
        return b"\x01\x01" + target, CHIP_TIME

    def _cmd_42(self, args: bytes) -> tuple[bytes, float]:  # InCommunicateThru (RX CRC check off)
        answer = self.active.answer(args) if self.active is not None else None
        if answer is None:
            return b"\x01", CHIP_TIME  # timeout: the target did not answer
        return b"\x00" + answer + (crc_a(answer) if len(answer) > 1 else b""), CHIP_TIME

    def _cmd_40(self, args: bytes) -> tuple[bytes, float]:  # InDataExchange
        answer = self.active.answer(args[1:]) if self.active is not None and args[:1] == b"\x01" else None
        if answer is None or answer == NAK_4BIT:
            return b"\x01" if answer is None else b"\x14", CHIP_TIME
        return b"\x00" + answer, CHIP_TIME

    def _cmd_52(self, args: bytes) -> tuple[bytes, float]:  # InRelease
        self.active = None
        return b"\x00", CHIP_TIME

    # The field

    def _field(self, on: bool) -> None:
        if not on:
            for tag in self.tags:
                tag.selected = False  # unpowered: back to IDLE when the field returns
            self.active = None
        self.field_on = on

    def _select(self, wanted: bytes) -> Tag | None:
        uid = bytes(b for i, b in enumerate(wanted) if not (b == 0x88 and i in (0, 4)))
        for tag in self.tags:
            if not wanted or tag.uid == uid:
                for other in self.tags:
                    other.selected = False
                tag.selected = True
                self.active = tag
                return tag
        self.active = None
        return None

    def after_answer(self) -> None:
        """What the chip does once its answer is on the wire: change rate, go to sleep."""
        new = getattr(self, "new_baud", None)
        if new is not None:
            self.baud, self.new_baud = new, None
        if getattr(self, "going_to_sleep", False):
            self.asleep, self.going_to_sleep = True, False
            self._field(False)


# The line


class Pn532Emulator:
    """A PN532 board on a USB-serial adapter: `path` is the nfcpy device path to give the reader.

    with Pn532Emulator(tmp_path) as board:
        board.put(Ntag("04a1b2c3d4e5f6", text="spy-team/red-1"))
        ...
        board.lift()
    """

    def __init__(self, directory: Path, name: str = "ttyUSB0", *, line_time: bool = True) -> None:
        self.link = Path(directory) / name
        self.line_time = line_time  # sleep the wire time of each frame (off: as fast as the pty goes)
        self.chip = Pn532Chip()
        self._lock = threading.Lock()
        self._master = self._slave = -1
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.plug()

    @property
    def path(self) -> str:
        return f"tty:{self.link}:pn532"

    # The test's hands

    def put(self, *tags: Tag) -> None:
        """Lay `tags` on the reader (replacing what lay there)."""
        with self._lock:
            self.chip.tags = list(tags)
            self.chip.active = None

    def lift(self) -> None:
        self.put()

    def plug(self) -> None:
        """Plug the adapter in: a fresh pty behind the link, and a chip just powered on."""
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        with contextlib.suppress(FileNotFoundError):
            self.link.unlink()
        self.link.symlink_to(os.ttyname(self._slave))
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="pn532", daemon=True)
        self._thread.start()

    def unplug(self) -> None:
        """Pull the adapter out: the tty hangs up, its name goes, the board loses power."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        os.close(self._master)
        os.close(self._slave)
        self.link.unlink()
        tags = self.chip.tags
        self.chip = Pn532Chip()
        self.chip.tags = tags

    def close(self) -> None:
        if not self._stop.is_set():
            self.unplug()

    def __enter__(self) -> Pn532Emulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def host_baud(self) -> int:
        """The rate the host's side of the line is set to now."""
        return SPEEDS.get(termios.tcgetattr(self._master)[5], 0)

    def _serve(self) -> None:
        master = self._master
        while not self._stop.is_set():
            ready, _, _ = select.select([master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(master, 4096)
            except OSError:  # no process has the tty open (EIO): wait for one
                time.sleep(0.01)
                continue
            with self._lock:
                chip = self.chip
                if self.host_baud() != chip.baud:
                    chip.stats.garbage += len(data)  # framing errors at the chip's end: ignored
                    continue
                answer, busy = chip.receive(data)
                if not answer:
                    continue
                seconds = (len(data) + len(answer)) * 10 / chip.baud + busy
                chip.stats.line_seconds += seconds
                chip.stats.bytes_out += len(answer)
            if self.line_time:
                time.sleep(seconds)
            with contextlib.suppress(OSError):
                os.write(master, answer)
            with self._lock:
                chip.after_answer()
