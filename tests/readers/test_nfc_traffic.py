"""What the nfcpy reader sends to name a card (issue 22), counted command by command on the emulated
PN532 (tests/pn532_emulator.py) under nfcpy's own serial driver: an activation, the READs that cover
the record and nothing else on a first tap, the activation alone on a repeat tap (the known-tag
cache), and never a stale card id after enrollment, an import or a rewrite by another device."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.games.catalog import load_catalog
from companion.readers.enrollment import Enrollment
from companion.readers.known import KnownTags
from companion.readers.nfc import NfcReader
from companion.readers.ntag import ndef_tlv
from companion.readers.registry import Registry
from tests.nfc_helpers import Taps
from tests.pn532_emulator import Exchange, MifareClassic, Ntag, Pn532Emulator, text_message
from tests.waiting import wait_for

NTAG = "04a1b2c3d4e5f6"
CARD = "peanuts/secret-police-2"
ILPT, IN_DATA_EXCHANGE = 0x4A, 0x40
READ_4, READ_8 = b"\x30\x04", b"\x30\x08"


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Pn532Emulator]:
    with Pn532Emulator(tmp_path) as emulated:
        yield emulated


def reading(board: Pn532Emulator, taps: Taps, **options: Any) -> NfcReader:
    options.setdefault("debounce", 0.0)
    options.setdefault("retry", 0.2)
    reader = NfcReader(board.path, **options)
    reader.start(taps)
    wait_for(lambda: reader._polls >= 2)  # open, and polling an empty field
    return reader


def since(board: Pn532Emulator, start: int) -> list[Exchange]:
    return board.chip.stats.exchanges[start:]


def lay(board: Pn532Emulator, reader: NfcReader, tag: Ntag | MifareClassic) -> int:
    """Lay `tag` on the reader once it has seen the field empty; where its traffic starts."""
    wait_for(lambda: reader.filter.present is None)
    start = len(board.chip.stats.exchanges)
    tag.commands.clear()
    board.put(tag)
    return start


def lift(board: Pn532Emulator, reader: NfcReader) -> None:
    board.lift()
    wait_for(lambda: reader.filter.present is None)


def test_every_card_id_of_the_catalogue_fits_in_two_reads_from_page_4() -> None:
    """The minimum the benchmark measures against: the NDEF TLV of any shipped card id, written
    from page 4, ends within the 32 bytes of READ 4 and READ 8."""
    cards = [card for game in load_catalog().values() for card in game.cards]
    assert len(cards) > 90  # every game's deck
    longest = max(cards, key=len)
    assert len(ndef_tlv(longest)) - 1 <= 32, longest  # the terminator TLV need not be read


def test_a_first_tap_sends_the_activation_and_the_reads_that_cover_the_record(
    board: Pn532Emulator,
) -> None:
    taps = Taps()
    reader = reading(board, taps)
    try:
        tag = Ntag(NTAG, 215, text=CARD)
        start = lay(board, reader, tag)
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"card": CARD, "seat": None}]
        polls = reader._polls
        wait_for(lambda: reader._polls >= polls + 3)  # held: presence checks
        assert tag.commands == [READ_4, READ_8]  # no GET_VERSION, no capability container
        sent = since(board, start)
        # Only polls, presence checks and the two READs: no register writes for the CRC, no
        # RFConfiguration, no InCommunicateThru.
        assert {e.code for e in sent} == {ILPT, IN_DATA_EXCHANGE}
        first_read = next(i for i, e in enumerate(sent) if e.code == IN_DATA_EXCHANGE)
        met, read_4, read_8 = sent[first_read - 1 : first_read + 2]
        assert (met.code, met.args) == (ILPT, b"\x01\x00")  # a poll for any 106A tag
        assert (read_4.args, read_8.args) == (b"\x01" + READ_4, b"\x01" + READ_8)
        held = sent[first_read + 2 :]
        assert held and all(e.code == ILPT and e.args[2:] == b"\x88" + bytes.fromhex(NTAG) for e in held)
    finally:
        reader.stop()


def test_a_short_record_takes_one_read(board: Pn532Emulator) -> None:
    taps = Taps()
    reader = reading(board, taps)
    try:
        tag = Ntag(NTAG, 213, text="spy/a-1")  # its TLV ends within page 7
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"card": "spy/a-1", "seat": None}] and tag.commands == [READ_4]
    finally:
        reader.stop()


def test_a_repeat_tap_is_served_from_the_cache(board: Pn532Emulator) -> None:
    taps = Taps()
    reader = reading(board, taps)
    try:
        tag = Ntag(NTAG, 215, text=CARD)
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 1)
        lift(board, reader)
        start = lay(board, reader, tag)
        wait_for(lambda: len(taps) == 2)
        assert taps.taps == [{"card": CARD, "seat": None}] * 2
        assert tag.commands == []  # not one command reached the tag but its activation
        assert {e.code for e in since(board, start)} == {ILPT}
        assert reader.known.hits == 1
    finally:
        reader.stop()


def test_a_mifare_classic_card_is_named_by_its_uid_without_a_command(board: Pn532Emulator) -> None:
    taps = Taps()
    reader = reading(board, taps)
    try:
        card = MifareClassic("c0ffee01")
        start = lay(board, reader, card)
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"uid": "c0ffee01", "seat": None}]
        assert card.commands == [] and {e.code for e in since(board, start)} == {ILPT}
    finally:
        reader.stop()


def test_a_tag_rewritten_elsewhere_is_read_again_not_named_from_the_cache(board: Pn532Emulator) -> None:
    """A phone rewrites the tag while it is off this reader: gone longer than the cache's `life`,
    its next tap is read in full and names the new card."""
    taps = Taps()
    reader = reading(board, taps)
    reader.known = KnownTags(life=0.3)
    try:
        tag = Ntag(NTAG, 215, text=CARD)
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 1)
        lift(board, reader)
        record = ndef_tlv("spy-team/red-1")
        tag.memory[16 : 16 + len(record)] = record  # the phone's write
        # off the reader for longer than the cache trusts a UID it no longer sees
        wait_for(lambda: time.monotonic() - reader.filter.left_at > reader.known.life)
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 2)
        assert taps.taps[1] == {"card": "spy-team/red-1", "seat": None}
        assert tag.commands == [READ_4, READ_8]
    finally:
        reader.stop()


def test_a_tag_lifted_mid_read_is_read_again_not_counted_by_its_uid(board: Pn532Emulator) -> None:
    """READ 8 goes unanswered (the tag left): nothing is counted, the next poll reads it afresh."""
    taps = Taps()
    reader = reading(board, taps)
    try:
        tag = Ntag(NTAG, 215, text=CARD)
        answer = tag.answer
        calls: list[bytes] = []

        def leaves_once(command: bytes) -> bytes | None:
            calls.append(command)
            return None if len(calls) == 2 else answer(command)

        tag.answer = leaves_once  # type: ignore[method-assign]
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"card": CARD, "seat": None}]
        assert calls[:4] == [READ_4, READ_8, READ_4, READ_8]
    finally:
        reader.stop()


def test_enrollment_through_the_reader_forgets_the_card_id_it_overwrote(
    board: Pn532Emulator, tmp_path: Path
) -> None:
    taps = Taps()
    reader = reading(board, taps)
    registry = Registry(tmp_path / "cards.db")
    try:
        tag = Ntag(NTAG, 215, text=CARD)
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 1)
        lift(board, reader)
        session = Enrollment(load_catalog()["spy-team"], registry, force=True)
        reader.intercept = session.offer
        lay(board, reader, tag)
        wait_for(lambda: registry.lookup(NTAG) == "spy-team/red-1")
        assert text_message("spy-team/red-1") in tag.user_data()  # written by nfcpy, read back
        lift(board, reader)
        reader.intercept = None
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 2)
        assert taps.taps[1] == {"card": "spy-team/red-1", "seat": None}  # not the cached CARD
        assert tag.commands[:1] == [READ_4]
    finally:
        reader.stop()
        registry.close()


def test_an_import_forgets_every_card_id(board: Pn532Emulator, tmp_path: Path) -> None:
    registry = Registry(tmp_path / "cards.db")
    taps = Taps()
    reader = reading(board, taps)
    reader.known = KnownTags(stamp=registry.generation)  # as the daemon shares it
    try:
        tag = Ntag(NTAG, 215, text=CARD)
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 1)
        lift(board, reader)
        assert len(reader.known) == 1
        registry.import_({"version": 1, "tags": [{"uid": "04000000000009", "card": "spy-team/red-3"}]})
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 2)
        assert tag.commands == [READ_4, READ_8]  # read again in full
    finally:
        reader.stop()
        registry.close()


def test_other_drivers_name_the_card_through_nfcpys_sense_and_exchange(board: Pn532Emulator) -> None:
    """`FrontendLink` (any driver but a PN53x polling 106A alone), here on the same PN532 by asking
    for 212F too: the card id from `clf.exchange` READs, a held card counted once, Classic by UID."""
    taps = Taps()
    reader = reading(board, taps, targets=["106A", "212F"])
    try:
        tag = Ntag(NTAG, 215, text=CARD)
        lay(board, reader, tag)
        wait_for(lambda: len(taps) == 1)
        polls = reader._polls
        wait_for(lambda: reader._polls >= polls + 3)
        assert taps.taps == [{"card": CARD, "seat": None}] and tag.commands == [READ_4, READ_8]
        lift(board, reader)
        lay(board, reader, MifareClassic("c0ffee01"))
        wait_for(lambda: len(taps) == 2)
        assert taps.taps[1] == {"uid": "c0ffee01", "seat": None}
    finally:
        reader.stop()


def test_an_acr122u_names_the_card_with_the_same_chip_commands() -> None:
    """The ACR122U's PN532 behind its CCID escape transport (tests/readers/test_pn532.py)."""
    from tests.readers.test_pn532 import Acr122Usb, acr122

    usb = Acr122Usb()
    tag = Ntag(NTAG, 215, text=CARD)
    usb.chip.tags = [tag]
    taps = Taps()
    reader = NfcReader("usb:072f:2200", clf=acr122(usb), found="usb:072f:2200", debounce=0.0)
    reader.start(taps)
    try:
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"card": CARD, "seat": None}] and tag.commands == [READ_4, READ_8]
        reads = [e for e in usb.chip.stats.exchanges if e.code == IN_DATA_EXCHANGE]
        assert [e.args for e in reads] == [b"\x01" + READ_4, b"\x01" + READ_8]
    finally:
        reader.stop()
