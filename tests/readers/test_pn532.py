"""Readers through nfcpy's own PN532 and ACR122U drivers, against an emulated chip (issue 16).

The PN532 runs in tests/pn532_emulator.py on a pseudo-terminal: nfcpy's serial transport, its
`pn532`/`pn53x` driver and its Type 2 tag code talk to it exactly as to a board on a USB-serial
adapter. The ACR122U's chip is the same emulated PN532 behind a CCID escape transport (the USB
layer cannot run here): that tests nfcpy's `acr122` driver from its transport up.
"""

from __future__ import annotations

import contextlib
import errno
import os
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ndef
import nfc
import nfc.clf.acr122
import nfc.tag
import pytest

from companion.readers.frontend import adopt, close_frontend, open_frontend
from companion.readers.health import LinkWatch
from companion.readers.nfc import NfcReader, NfcTag, read_tag
from tests.nfc_helpers import Taps
from tests.pn532_emulator import (
    MifareClassic,
    Ntag,
    Pn532Chip,
    Pn532Emulator,
    frame,
    ndef_tlv,
    text_message,
)
from tests.waiting import wait_for

NTAG = "04a1b2c3d4e5f6"
CLASSIC = "c0ffee01"


class Cues:
    """The LinkWatch's announcements."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def __call__(self, cue: Any) -> None:
        self.seen.append(cue)

    def names(self) -> list[str]:
        return [cue.name for cue in self.seen]


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Pn532Emulator]:
    with Pn532Emulator(tmp_path) as emulated:
        yield emulated


def torn(text: str) -> bytes:
    """An NDEF TLV cut short, as a write interrupted by a lift leaves it: the record header promises
    more payload than the TLV holds."""
    message = text_message(text)
    return ndef_tlv(message[: len(message) // 2])


def reading(board: Pn532Emulator, taps: Taps, cues: Cues | None = None, **options: Any) -> NfcReader:
    options.setdefault("debounce", 0.2)
    options.setdefault("retry", 0.2)
    reader = NfcReader(board.path, watch=LinkWatch(cues), **options)
    reader.start(taps)
    return reader


def read_once(board: Pn532Emulator) -> tuple[NfcTag | None, Any]:
    """nfcpy's own connect loop on the emulated board, reading the tag with the daemon's read_tag."""
    clf = open_frontend(board.path)
    assert clf is not None
    got: list[NfcTag | None] = []

    def on_connect(tag: Any) -> bool:
        got.append(read_tag(tag))
        return False

    options = {"targets": ["106A"], "on-connect": on_connect, "iterations": 1, "interval": 0.0}
    clf.connect(rdwr={**options, "beep-on-connect": False}, terminate=lambda: bool(got))
    return got[0], clf


# nfcpy's Type 2 tag code against the emulated NTAG21x


@pytest.mark.parametrize("model", [213, 215, 216])
def test_nfcpy_reads_and_writes_an_ntag_on_the_pn532(board: Pn532Emulator, model: int) -> None:
    tag = Ntag(NTAG, model, text="spy-team/red-1")
    board.put(tag)
    read, clf = read_once(board)
    try:
        assert read is not None and read.uid == NTAG and read.card == "spy-team/red-1"
        assert type(read.tag).__name__ == f"NTAG{model}"
        assert read.write("spy-team/blue-24")  # nfcpy writes, then reads back
        assert text_message("spy-team/blue-24") in tag.user_data()
    finally:
        close_frontend(clf)


def test_nfcpy_formats_a_blank_ntag_and_the_card_id_goes_on_it(board: Pn532Emulator) -> None:
    tag = Ntag(NTAG, 213, data=bytes(8))  # never formatted: no NDEF TLV at all
    board.put(tag)
    read, clf = read_once(board)
    try:
        assert read is not None and read.card is None
        assert read.tag.format()  # nfcpy's NTAG213 format: factory defaults, an empty NDEF message
        # NXP's factory layout: a lock control TLV, then an empty NDEF message.
        assert tag.user_data().startswith(bytes.fromhex("0103a00c34 0300fe"))
        area = read.tag.ndef
        assert area is not None and area.is_writeable
        area.records = [ndef.TextRecord("spy-team/red-2", "en")]
        assert text_message("spy-team/red-2") in tag.user_data()
    finally:
        close_frontend(clf)


# Taps through the reader


def test_a_card_held_on_the_pn532_counts_once_and_again_when_put_back(board: Pn532Emulator) -> None:
    taps = Taps()
    board.put(Ntag(NTAG, text="spy-team/red-1"))
    reader = reading(board, taps, debounce=0.0)
    try:
        wait_for(lambda: len(taps) == 1)
        wait_for(lambda: reader._polls >= 10)  # held: its presence checked every poll
        assert len(taps) == 1 and reader.status()["reads"] == 1
        board.lift()
        wait_for(lambda: reader.filter.present is None)
        board.put(Ntag(NTAG, text="spy-team/red-1"))
        wait_for(lambda: len(taps) == 2)
        assert taps.taps == [{"card": "spy-team/red-1", "seat": None}] * 2
    finally:
        reader.stop()


def test_only_106a_is_polled_by_default(board: Pn532Emulator) -> None:
    """NTAG21x and MIFARE Classic are 106A; 106B/212F polls slow every poll (issue 16, 6)."""
    reader = reading(board, Taps())
    try:
        wait_for(lambda: len(board.chip.stats.polls) >= 10)
    finally:
        reader.stop()
    assert set(board.chip.stats.polls) == {0}  # BrTy 0: 106 kbps Type A


@pytest.mark.parametrize(
    "tag",
    [Ntag(NTAG, data=torn("spy-team/red-3")), Ntag(NTAG, data=ndef_tlv(b"\x00\x01\x02\x03\x04"))],
    ids=["torn-ndef", "garbage-ndef"],
)
def test_a_malformed_tag_counts_by_uid_and_never_closes_the_reader(board: Pn532Emulator, tag: Ntag) -> None:
    """ndef.DecodeError used to escape, the reader was closed and reopened again and again (16, 3)."""
    taps, cues = Taps(), Cues()
    board.put(tag)
    reader = reading(board, taps, cues, seat=2)
    try:
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"uid": NTAG, "seat": 2}]
        polls = reader._polls
        wait_for(lambda: reader._polls >= polls + 5)  # held, presence-checked: no flapping
        assert len(taps) == 1
        assert reader.status()["opens"] == 1 and reader.status()["connected"]
        assert cues.names() == []
    finally:
        reader.stop()


def test_a_mifare_classic_card_counts_by_uid_once_while_held(board: Pn532Emulator) -> None:
    """nfcpy takes it for a Type 2 tag whose reads are refused: it used to be read forever and
    never delivered (issue 16, 4). Its presence is checked by selecting it again."""
    taps, cues = Taps(), Cues()
    card = MifareClassic(CLASSIC)
    board.put(card)
    reader = reading(board, taps, cues, debounce=0.0)
    try:
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"uid": CLASSIC, "seat": None}]
        polls = reader._polls
        wait_for(lambda: reader._polls >= polls + 5)
        assert len(taps) == 1 and reader.status()["reads"] == 1  # held: one read, one tap
        assert not any(command[0] == 0x30 for command in card.commands[2:])  # no read retried
        board.lift()
        wait_for(lambda: reader.filter.present is None)
        board.put(card)
        wait_for(lambda: len(taps) == 2)
        assert cues.names() == []
    finally:
        reader.stop()


def test_two_cards_on_a_pn532_read_as_the_one_that_answers_first(board: Pn532Emulator) -> None:
    """docs/nfc.md: a PN532 (and an ACR122U) resolves the collision; an RC-S380 reads nothing."""
    taps = Taps()
    board.put(Ntag(NTAG, text="spy-team/red-1"), Ntag("04000000000002", text="spy-team/red-2"))
    reader = reading(board, taps)
    try:
        wait_for(lambda: len(taps) == 1)
        polls = reader._polls
        wait_for(lambda: reader._polls >= polls + 5)
        assert taps.taps == [{"card": "spy-team/red-1", "seat": None}]
    finally:
        reader.stop()
    docs = (Path(__file__).parents[2] / "docs" / "nfc.md").read_text()
    assert "an RC-S380\n  reads **nothing**" in docs  # not "whichever answers first" for every reader


def test_enrolling_a_mifare_classic_card_registers_its_uid_and_never_writes(board: Pn532Emulator) -> None:
    card = MifareClassic(CLASSIC)
    board.put(card)
    offered: list[NfcTag] = []
    reader = reading(board, Taps())
    reader.intercept = offered.append
    try:
        wait_for(lambda: offered)
        tag = offered[0]
        assert (tag.uid, tag.card, tag.writable) == (CLASSIC, None, False)
        sent = len(card.commands)
        assert tag.write("spy-team/red-1") is False
        assert tag.write_error == "a MIFARE Classic card is known by its UID only"
        assert len(card.commands) == sent  # nothing was sent to the card
    finally:
        reader.stop()


# The serial line: rates, processes, cables


@pytest.mark.parametrize("stray", [921600, 460800, 230400])
def test_a_chip_left_at_a_higher_rate_is_brought_back_to_115200(board: Pn532Emulator, stray: int) -> None:
    """nfcpy raised the rate at open and lowered it only in close(): after a kill -9 the chip stayed
    there and every open failed until a power cycle (issue 16, 2)."""
    board.chip.baud = stray  # as a daemon killed at that rate left it
    taps = Taps()
    board.put(Ntag(NTAG, text="spy-team/red-1"))
    reader = reading(board, taps)
    try:
        wait_for(lambda: len(taps) == 1)
        assert board.chip.baud == 115200 and board.host_baud() == 115200  # and never raised again
        assert reader.status()["opens"] == 1
    finally:
        reader.stop()


def test_nfcpys_own_open_strands_the_chip_at_921600_and_the_reader_brings_it_back(
    board: Pn532Emulator,
) -> None:
    """The cause, reproduced: nfcpy's stock pn532.init raises the line to 921600; a process killed
    before its close() leaves the chip there."""
    import nfc.clf.pn532
    import nfc.clf.transport

    stock = nfc.clf.pn532.init(nfc.clf.transport.TTY(str(board.link)))
    assert board.chip.baud == 921600
    stock.chipset.transport.tty.close()  # killed: close() never ran
    clf = open_frontend(board.path)
    try:
        assert clf is not None and board.chip.baud == 115200
    finally:
        close_frontend(clf)
    assert board.chip.baud == 115200  # and left there


def test_unplugged_and_plugged_back_the_pn532_is_lost_then_back(board: Pn532Emulator) -> None:
    taps, cues = Taps(), Cues()
    board.put(Ntag(NTAG, text="spy-team/red-1"))
    reader = reading(board, taps, cues)
    try:
        wait_for(lambda: len(taps) == 1)
        board.unplug()  # the tty hangs up; nfcpy's next command fails
        wait_for(lambda: cues.names() == ["reader-lost"])
        assert not reader.status()["connected"]
        board.put(Ntag("04000000000002", text="spy-team/red-2"))
        board.plug()  # a new tty, a chip just powered on
        wait_for(lambda: len(taps) == 2)
        assert taps.taps[1] == {"card": "spy-team/red-2", "seat": None}
        assert cues.names() == ["reader-lost", "reader-back"]
    finally:
        reader.stop()


def test_a_second_process_cannot_take_the_serial_reader(board: Pn532Emulator) -> None:
    """`sudo companion cards enroll` beside the service used to talk over it on one PN532 (16, 8)."""
    first = open_frontend(board.path)
    try:
        assert first is not None
        with pytest.raises(OSError) as refused:
            open_frontend(board.path)
        assert refused.value.errno == errno.EBUSY and "in use by another process" in str(refused.value)
    finally:
        close_frontend(first)
    again = open_frontend(board.path)  # released on close
    assert again is not None
    close_frontend(again)


HOLDER = """
import os, sys, time
from companion.readers.frontend import open_frontend
clf = open_frontend(sys.argv[1])
try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    print("controlling terminal", flush=True)
except OSError:
    print("no controlling terminal", flush=True)
for line in sys.stdin:  # each line: "still alive" (a SIGHUP would have ended it)
    print("alive", flush=True)
"""


def test_the_reader_never_becomes_the_controlling_terminal(board: Pn532Emulator) -> None:
    """Started by systemd the daemon is a session leader: a tty opened without O_NOCTTY becomes its
    controlling terminal, and unplugging the adapter kills it with SIGHUP (issue 16, 9)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(board.link)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        assert process.stdout.readline().strip() == "no controlling terminal"
        board.unplug()  # the tty hangs up: a SIGHUP, had it become the controlling terminal, is sent now
        with contextlib.suppress(BrokenPipeError):  # dead already
            process.stdin.write("still there?\n")
            process.stdin.flush()
        answer = process.stdout.readline().strip()  # "" once it is dead
        assert answer == "alive", f"the reader's process died of signal {-(process.wait(timeout=5) or 0)}"
    finally:
        process.kill()
        process.wait()


def test_a_hung_up_reader_closes_without_raising_and_frees_its_port(board: Pn532Emulator) -> None:
    clf = open_frontend(board.path)
    line = clf.device.chipset.transport
    board.unplug()
    close_frontend(clf)  # nfcpy's close would raise termios.error / OSError here
    assert line.tty is None


# The ACR122U: nfcpy's acr122 driver over a CCID transport to the emulated PN532


class Acr122Usb:
    """The ACR122U's USB side as nfcpy's `acr122` driver sees its transport: CCID escape commands
    carrying pseudo-APDUs for the reader's MCU (version, LEDs) and PN532 frames for the chip. Like
    many real ones (nfcpy #154, #231, #243), once its PN532 is put in power-down it never answers
    again until it is replugged."""

    TYPE = "USB"
    manufacturer_name = "ACS"
    product_name = "ACR122U PICC Interface"

    def __init__(self) -> None:
        self.chip = Pn532Chip()
        self.replies: list[bytes] = []
        self.dead = False

    def write(self, data: bytes) -> None:
        data = bytes(data)
        if data[0] == 0x62:  # ICC power on
            self.replies.append(bytes([0x80]) + bytes(9))
            return
        apdu = data[10:]
        if apdu.startswith(b"\xff\x00\x48"):  # the reader's firmware version
            self._reply(b"ACR122U207")
        elif apdu.startswith(b"\xff\x00\x00\x00") and not self.dead:  # a PN532 command
            answer, _ = self.chip.receive(frame(apdu[5:]))
            self.chip.after_answer()
            self.dead = self.chip.asleep
            self._reply(answer[6 + 5 : -2] + b"\x90\x00")  # past the ACK and the frame header
        elif self._mcu_answers(apdu):
            self._reply(b"\x90\x00")

    def _mcu_answers(self, apdu: bytes) -> bool:
        """LEDs and settings are the reader's MCU, alive even when its PN532 is not; a PN532 ACK."""
        if apdu.startswith(b"\xff\x00") and apdu[2:3] in (b"\x40", b"\x51"):
            return True
        return not self.dead and apdu == bytes.fromhex("0000ff00ff00")

    def _reply(self, data: bytes) -> None:
        self.replies.append(struct.pack("<BI5B", 0x80, len(data), 0, 0, 0, 0, 0) + data)

    def read(self, timeout: int) -> bytearray:
        if not self.replies:
            raise OSError(errno.ETIMEDOUT, os.strerror(errno.ETIMEDOUT))
        return bytearray(self.replies.pop(0))

    def close(self) -> None:
        self.replies.clear()


def acr122(usb: Acr122Usb) -> Any:
    clf = nfc.ContactlessFrontend()
    clf.device = adopt(nfc.clf.acr122.init(usb))
    return clf


def test_an_acr122u_is_closed_without_power_down_and_opens_again() -> None:
    """nfcpy's close sends PowerDown, after which many ACR122Us need a replug: the daemon closes and
    reopens its reader after every loss and on every restart (issue 16, 1)."""
    usb = Acr122Usb()
    clf = acr122(usb)
    assert type(clf.device).__name__ == "Acr122Device"
    close_frontend(clf)
    assert usb.chip.power_downs == 0 and not usb.dead
    usb.chip.tags = [Ntag(NTAG, text="spy-team/red-1")]
    again = acr122(usb)  # opens again: the chip answers
    try:
        got: list[Any] = []

        def on_connect(tag: Any) -> bool:
            got.append(read_tag(tag))
            return False

        options = {"targets": ["106A"], "on-connect": on_connect, "iterations": 1, "interval": 0.0}
        again.connect(rdwr={**options, "beep-on-connect": False}, terminate=lambda: bool(got))
        assert got[0].card == "spy-team/red-1"
    finally:
        close_frontend(again)


def test_the_acr122u_model_dies_as_a_real_one_after_nfcpys_own_close() -> None:
    """The emulation above is not lenient: nfcpy's unpatched close kills it until a replug."""
    usb = Acr122Usb()
    clf = nfc.ContactlessFrontend()
    clf.device = nfc.clf.acr122.init(usb)
    clf.close()
    assert usb.chip.power_downs == 1 and usb.dead
    with pytest.raises(OSError):
        nfc.clf.acr122.init(usb)


def test_auto_keeps_looking_and_switches_to_a_reader_that_appears(
    board: Pn532Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`auto` decided once at start-up: a reader plugged in later was never used (issue 16, 5)."""
    from companion.readers import families
    from companion.readers import nfc as nfc_readers

    looks: list[float] = []  # each search's look at the serial ports

    def paths() -> list[str]:
        looks.append(time.monotonic())
        return [board.path]

    monkeypatch.setattr(nfc_readers, "auto_paths", paths)
    board.unplug()
    cues, taps = Cues(), Taps()
    [reader] = families.readers_from_config([{"device": "auto", "retry": 0.2}], cues)
    assert reader.status()["kind"] == "virtual" and reader.status()["connected"]
    reader.start(taps)
    try:
        wait_for(lambda: len(looks) >= 3)  # it looked again and again, and found nothing meanwhile
        assert reader.status()["kind"] == "virtual" and cues.names() == []
        board.put(Ntag(NTAG, text="spy-team/red-1"))
        board.plug()
        wait_for(lambda: len(taps) == 1)
        assert reader.status()["kind"] == "nfc" and reader.status()["path"] == board.path
        assert cues.names() == ["reader-back"] and cues.seen[0].data["found"] == board.path
    finally:
        reader.stop()


def test_auto_keeps_the_reader_detection_opened(
    board: Pn532Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detection used to open, close and reopen: a power-down between (fatal to an ACR122U)."""
    from companion.readers import families
    from companion.readers import nfc as nfc_readers

    monkeypatch.setattr(nfc_readers, "auto_paths", lambda: [board.path])
    board.put(Ntag(NTAG, text="spy-team/red-1"))
    taps = Taps()
    [reader] = families.readers_from_config([{"device": "auto", "retry": 0.2}])
    reader.start(taps)
    try:
        wait_for(lambda: len(taps) == 1)
        assert board.chip.power_downs == 0 and board.chip.stats.commands.count(0x00) == 1  # one open
    finally:
        reader.stop()
