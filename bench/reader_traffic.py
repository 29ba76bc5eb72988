"""What a tap costs on the PolledReader families' lines, beside the protocol's minimum (issue 22).

    .venv/bin/python bench/reader_traffic.py [--taps 10] [--json results.json]

Each family's real reader code and library run on the tests' emulators, counted at the lowest
boundary the library exposes: a PN532 board through Adafruit's driver on `busio.I2C` / `busio.SPI`
(tests/pn532_buses.py: chip commands, bus transfers, bytes), an RC522 through Joy-IT's library on
`spidev` (tests/rc522_emulator.py: SPI transfers, bytes), PC/SC through a real pcscd, vpcd and
pyscard (tests/pcsc_card.py: APDUs and their bytes; skipped if pcscd/vpcd are missing).

The bench wraps the reader's `_read` (one poll) to take the counters before and after each poll,
and for each of `--taps` new NTAG213 tags carrying `peanuts/secret-police-2` (the longest card id
shape: a 32-byte TLV, two 16-byte READs) lays it, waits for the poll that meets it (the first tap),
waits for three polls of it held, lifts it, waits for an empty poll, lays it again at once (the
repeat tap, within the known-tag cache's life) and lifts it. It reports, per family, the median
cost of the meeting poll of a first and a repeat tap, of a held poll and of an empty poll, beside
the minimum computed from the protocol (below), with ratios, and the detection time (card laid, at
a random point of the reader's wait, -> the end of the poll that met it, wall clock).

Minimums (`minimum()`): activation alone for a known UID, activation + READ 4 + READ 8 for a card
id. PN532: 1 / 3 commands, each 3 transfers (the command's frame, the ACK, the answer's frame, each
led by the one byte the interface adds: I2C's RDY, SPI's DW/DR; the IRQ line, not status polls,
saying when it is ready): 42 / 136 B. RC522: 5 transfers per ISO 14443 exchange (clear the IRQ
bits, the frame into the FIFO, StartSend, the status and answer read in one burst, StartSend
cleared): 25 / 35, and the bytes those carry (10 + frame + answer each). PC/SC: GET DATA / + 2 READ
BINARY: 1 / 3 APDUs, 14 / 60 B. The ratio is of commands (PN532) or transfers (RC522) or APDUs
(PC/SC), and of bytes and modelled line time beside it.
Line time model: I2C at 100 kHz, 9 bits a byte plus the address byte per transfer; SPI at 1 MHz
(the PN532 driver's and the RC522 reader's clock), 8 bits a byte. Not modelled: the air time at
106 kbps (the same for every implementation), the chip's processing, Python's time per transfer on
a Pi, and for PC/SC the USB CCID exchange (wall time only).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere in the checkout

from companion.readers.base import PolledReader
from companion.readers.families import readers_from_config
from companion.readers.known import KnownTags

CARD = "peanuts/secret-police-2"
EMPTY_POLLS = 20


@dataclass(frozen=True)
class Counts:
    commands: int = 0  # chip commands (PN532), ISO exchanges are not counted separately (RC522)
    transfers: int = 0  # bus transfers (I2C/SPI) or APDUs (PC/SC)
    bytes: int = 0

    def __sub__(self, other: Counts) -> Counts:
        return Counts(
            self.commands - other.commands, self.transfers - other.transfers, self.bytes - other.bytes
        )


@dataclass
class Poll:
    uid: str | None
    cost: Counts
    ended: float
    seconds: float  # wall time of the poll, in this process


@dataclass
class Probe:
    """Every poll of `reader`, with what it cost on the counters."""

    reader: PolledReader
    counters: Callable[[], Counts]
    polls: list[Poll] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        read = self.reader._read

        def counted() -> Any:
            before, started = self.counters(), time.monotonic()
            tag = read()
            ended = time.monotonic()
            poll = Poll(
                tag.uid if tag is not None else None, self.counters() - before, ended, ended - started
            )
            with self.lock:
                self.polls.append(poll)
            return tag

        self.reader._read = counted  # type: ignore[method-assign]

    def next_poll(self, since: int, uid: str | None, timeout: float = 10.0) -> tuple[int, Poll]:
        """The first poll after index `since` that saw `uid` (None: an empty field)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for index in range(since, len(self.polls)):
                    if self.polls[index].uid == uid:
                        return index, self.polls[index]
            time.sleep(0.001)
        raise TimeoutError(f"no poll saw {uid!r} within {timeout} s")

    def count(self) -> int:
        with self.lock:
            return len(self.polls)


@dataclass
class Family:
    name: str
    reader: PolledReader
    counters: Callable[[], Counts]
    lay: Callable[[Any], None]
    lift: Callable[[Any], None]
    new_tag: Callable[[int], Any]
    uid_of: Callable[[Any], str]
    line_time: Callable[[Counts], float | None]  # seconds on the bus for a poll's counts


def run_family(family: Family, taps: int) -> dict[str, Any]:
    probe = Probe(family.reader, family.counters)
    chance = random.Random(22)
    family.reader.start(lambda **tap: None)
    first: list[Poll] = []
    repeat: list[Poll] = []
    held: list[Poll] = []
    empty: list[Poll] = []
    detection: list[float] = []
    try:
        index, _ = probe.next_poll(0, None)
        for _ in range(EMPTY_POLLS):  # the empty field, steady: what the reader costs all day
            index, poll = probe.next_poll(index + 1, None)
            empty.append(poll)
        for number in range(1, taps + 1):
            tag = family.new_tag(number)
            uid = family.uid_of(tag)
            time.sleep(chance.uniform(0, family.reader.poll_interval))  # laid at any point of a wait
            since, laid = probe.count(), time.monotonic()
            family.lay(tag)
            index, poll = probe.next_poll(since, uid)
            first.append(poll)
            detection.append(poll.ended - laid)
            for _ in range(3):
                index, poll = probe.next_poll(index + 1, uid)
                held.append(poll)
            family.lift(tag)
            index, _ = probe.next_poll(index + 1, None)
            family.lay(tag)
            index, poll = probe.next_poll(index + 1, uid)
            repeat.append(poll)
            family.lift(tag)
            index, _ = probe.next_poll(index + 1, None)
    finally:
        family.reader.stop()
    return report(family, first, repeat, held, empty, detection)


def median_counts(polls: list[Poll]) -> Counts:
    return Counts(
        round(statistics.median(p.cost.commands for p in polls)),
        round(statistics.median(p.cost.transfers for p in polls)),
        round(statistics.median(p.cost.bytes for p in polls)),
    )


def described(counts: Counts, family: Family) -> dict[str, Any]:
    line = family.line_time(counts)
    return {
        "commands": counts.commands,
        "transfers": counts.transfers,
        "bytes": counts.bytes,
        "line_ms": None if line is None else round(1000 * line, 3),
    }


def ratio(measured: int | float | None, floor: int | float | None) -> float | None:
    return None if not measured or not floor else round(measured / floor, 2)


def report(
    family: Family,
    first: list[Poll],
    repeat: list[Poll],
    held: list[Poll],
    empty: list[Poll],
    detection: list[float],
) -> dict[str, Any]:
    known_floor, record_floor = minimum(family.name)
    out: dict[str, Any] = {"family": family.name, "cadence_s": family.reader.poll_interval}
    for label, polls, floor in (("first", first, record_floor), ("repeat", repeat, known_floor)):
        measured = described(median_counts(polls), family)
        minimum_ = described(floor, family)
        unit = "commands" if family.name.startswith("pn532") else "transfers"
        out[label] = {
            "measured": measured,
            "minimum": minimum_,
            "ratio": ratio(measured[unit], minimum_[unit]),
            "ratio_bytes": ratio(measured["bytes"], minimum_["bytes"]),
            "ratio_line": ratio(measured["line_ms"], minimum_["line_ms"]),
        }
    out["held_poll"] = described(median_counts(held), family)
    out["empty_poll"] = described(median_counts(empty), family)
    out["empty_polls_seen"] = len(empty)
    out["empty_poll_wall_ms"] = round(1000 * statistics.median(p.seconds for p in empty), 3)
    out["first_tap_wall_ms"] = round(1000 * statistics.median(p.seconds for p in first), 3)
    out["detection_ms"] = {
        "median": round(1000 * statistics.median(detection), 1),
        "max": round(1000 * max(detection), 1),
    }
    return out


# The protocol's minimums


def pn532_frame(data: int) -> int:
    return data + 7  # 00 00 FF LEN LCS [TFI + data] DCS 00


# A command's frame, the ACK and the answer's frame, each a transfer led by one byte the interface
# adds (I2C: the RDY status byte of each read; SPI: DW, DR), with the IRQ line, not status polls,
# saying when the chip is ready.
PN532_POLL = pn532_frame(4) + 6 + pn532_frame(15) + 3  # InListPassiveTarget, a 7-byte UID's target
PN532_READ = pn532_frame(5) + 6 + pn532_frame(19) + 3  # InDataExchange READ, 16 bytes


def rc522_exchange(frame: int, answer: int) -> int:
    return 2 + (1 + frame) + 2 + (3 + answer) + 2  # the five transfers' bytes


RC522_ACTIVATION = (
    rc522_exchange(1, 2) + 2 * rc522_exchange(2, 5) + 2 * rc522_exchange(9, 3)
)  # WUPA, anticollision and select on two cascade levels
RC522_READ = rc522_exchange(4, 18)


def minimum(name: str) -> tuple[Counts, Counts]:
    """(known UID, card id read) for a family."""
    if name.startswith("pn532"):
        return Counts(1, 3, PN532_POLL), Counts(3, 9, PN532_POLL + 2 * PN532_READ)
    if name == "rc522":
        return Counts(0, 25, RC522_ACTIVATION), Counts(0, 35, RC522_ACTIVATION + 2 * RC522_READ)
    return Counts(0, 1, 5 + 9), Counts(0, 3, 5 + 9 + 2 * (5 + 18))  # GET DATA, READ BINARY


# The families on their emulators


def i2c_time(counts: Counts) -> float:
    return (counts.bytes + counts.transfers) * 9 / 100_000  # each transfer: its address byte


def spi_time(counts: Counts) -> float:
    return counts.bytes * 8 / 1_000_000


@contextmanager
def patched(module: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def pn532(bus_name: str, taps: int) -> dict[str, Any]:
    import busio

    from tests.pn532_buses import Pn532I2cBus, Pn532SpiBus
    from tests.pn532_emulator import ndef_tlv as emulator_tlv
    from tests.pn532_emulator import numbered_ntag, text_message

    bus = Pn532I2cBus() if bus_name == "i2c1" else Pn532SpiBus()
    with patched(busio, "I2C" if bus_name == "i2c1" else "SPI", bus):
        [reader] = readers_from_config([{"device": f"pn532:{bus_name}", "retry": 0.1}], known=KnownTags())
        assert isinstance(reader, PolledReader)

        def counters() -> Counts:
            # I2C: a PN532 frame is one transfer whose minimum carries no status byte; the bytes
            # counted at the bus are what the driver clocks, both ways.
            return Counts(len(bus.chip.stats.commands), bus.transfers, bus.bytes)

        def tag(number: int) -> Any:
            made = numbered_ntag(number)
            data = emulator_tlv(text_message(CARD))
            made.memory[16 : 16 + len(data)] = data
            return made

        family = Family(
            f"pn532-{bus_name[:3]}",
            reader,
            counters,
            lambda t: bus.put(t),
            lambda t: bus.lift(),
            tag,
            lambda t: t.uid.hex(),
            i2c_time if bus_name == "i2c1" else spi_time,
        )
        return run_family(family, taps)


def rc522(taps: int) -> dict[str, Any]:
    import spidev
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    from tests.pn532_emulator import numbered_ntag
    from tests.rc522_emulator import on_the_bus

    spi_dev, [board] = on_the_bus((0, 0))
    Device.pin_factory = MockFactory()
    with patched(spidev, "SpiDev", spi_dev):
        [reader] = readers_from_config([{"device": "rc522:spi0.0", "retry": 0.1}], known=KnownTags())
        assert isinstance(reader, PolledReader)

        def counters() -> Counts:
            return Counts(0, board.transfers, board.bytes)

        family = Family(
            "rc522",
            reader,
            counters,
            lambda t: board.put(t),
            lambda t: board.lift(),
            lambda n: numbered_ntag(n, CARD),
            lambda t: t.uid.hex(),
            spi_time,
        )
        return run_family(family, taps)


def pcsc(taps: int) -> dict[str, Any]:
    from tests.pcsc_card import Pcscd, VirtualNtag, ntag213, pcscd_missing

    missing = pcscd_missing()
    if missing:
        return {"family": "pcsc", "skipped": missing}
    daemon = Pcscd()
    os.environ["PCSCLITE_CSOCK_NAME"] = str(daemon.socket)  # before pyscard's library loads
    daemon.start()
    try:
        from companion.readers.ntag import ndef_tlv
        from companion.readers.pcsc import PcscReader

        reader = PcscReader("pcsc:Virtual PCD 00 00", retry=0.2)
        # vpcd is a polled driver (a lift takes 0.5 s to be seen, a lay up to 0.4 s): the repeat
        # tap comes >1 s after the last sighting here, so the bench lets entries live 3 s.
        reader.known = KnownTags(life=3.0)
        tags: list[VirtualNtag] = []

        def counters() -> Counts:
            return Counts(0, sum(len(t.apdus) for t in tags), sum(t.apdu_bytes for t in tags))

        def new_tag(number: int) -> VirtualNtag:
            uid = f"04{number:012x}"
            memory = ntag213(bytes.fromhex(uid))
            tlv = ndef_tlv(CARD)
            memory[16 : 16 + len(tlv)] = tlv
            made = VirtualNtag(uid, memory)
            tags.append(made)
            return made

        family = Family(
            "pcsc",
            reader,
            counters,
            lambda t: t.place(daemon.port),
            lambda t: t.lift(),
            new_tag,
            lambda t: t.uid.hex(),
            lambda counts: None,
        )
        return run_family(family, taps)
    finally:
        daemon.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--taps", type=int, default=10)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--families", default="pn532-i2c,pn532-spi,rc522,pcsc")
    args = parser.parse_args()
    runs: dict[str, Callable[[], dict[str, Any]]] = {
        "pn532-i2c": lambda: pn532("i2c1", args.taps),
        "pn532-spi": lambda: pn532("spi0.0", args.taps),
        "rc522": lambda: rc522(args.taps),
        "pcsc": lambda: pcsc(args.taps),
    }
    results = [runs[name]() for name in args.families.split(",")]
    for result in results:
        print(json.dumps(result))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
