"""PC/SC readers (`pcsc:`) through a real pcscd, its vpcd reader driver and pyscard, with an emulated
NTAG213 on vpcd's wire (tests/pcsc_card.py): taps, the card id read and written, enrollment, a held
card, pcscd going away and coming back, and a Spy Team trick through `companion run` (issue 11)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.games.catalog import load_catalog
from companion.readers.enrollment import Enrollment
from companion.readers.health import LinkWatch
from companion.readers.known import KnownTags
from companion.readers.ntag import ndef_tlv
from companion.readers.registry import Registry
from tests.nfc_helpers import SseClient, Taps
from tests.pcsc_card import Pcscd, VirtualNtag, ntag213, pcscd_missing
from tests.servers import Server, running_companion
from tests.spy_team_play import trick_cards
from tests.waiting import wait_for, wait_polls

READER = "Virtual PCD 00 00"


@pytest.fixture(scope="module")
def pcscd() -> Iterator[Pcscd]:
    """One private pcscd for the module."""
    missing = pcscd_missing()
    if missing and os.environ.get("CI"):
        pytest.fail(f"PC/SC is required in CI (scripts/test installs it): {missing}")
    if missing:
        pytest.skip(missing)
    daemon = Pcscd()  # at the socket tests/conftest.py names for every PC/SC client of the session
    daemon.start()
    try:
        yield daemon
    finally:
        daemon.close()


def tag_with(number: int, card: str | None = None) -> VirtualNtag:
    uid = f"04{number:012x}"
    memory = ntag213(bytes.fromhex(uid))
    if card is not None:
        tlv = ndef_tlv(card)
        memory[16 : 16 + len(tlv)] = tlv
    return VirtualNtag(uid, memory)


def first_trick(table: Server) -> list[str]:
    """A Spy Team game started through the API, its missions chosen: the first trick's four cards,
    in play order, for seat 1 to win it."""
    table.call(
        "POST", "/api/games", {"game": "spy-team", "players": ["A", "B", "C", "D"], "options": {"start": 0}}
    )
    table.call("POST", "/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    table.call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
    return trick_cards(table.call("GET", "/api/state"), winner=1)


def test_taps_a_held_card_once_and_pcscd_restarts_without_a_lost_or_doubled_tap(pcscd: Pcscd) -> None:
    from companion.readers.pcsc import PcscReader

    cues: list[Any] = []
    reader = PcscReader(
        f"pcsc:{READER[:7].lower()}", 2, debounce=0.3, retry=0.2, watch=LinkWatch(cues.append)
    )
    taps = Taps()
    reader.start(taps)
    blank, named = tag_with(1), tag_with(2, "spy-team/red-17")
    try:
        wait_for(lambda: reader.status()["connected"])
        assert reader.status()["path"] == READER  # found by a part of its name, in any case
        blank.place(pcscd.port)
        wait_for(lambda: len(taps.taps) == 1)
        wait_polls(reader.status, 20)  # held, 1 s at 50 ms a poll: read again and again, counted once
        assert taps.taps == [{"uid": "04000000000001", "seat": 2}]
        blank.lift()
        named.place(pcscd.port)
        wait_for(lambda: len(taps.taps) == 2)
        assert taps.taps[1] == {"card": "spy-team/red-17", "seat": 2}

        # pcscd goes away with the card lying on the reader, and comes back: not a new tap.
        pcscd.stop()
        # The cue follows the reader's state: wait for the cue itself, not for the state.
        wait_for(lambda: [cue.name for cue in cues] == ["reader-lost"])
        assert not reader.status()["connected"]
        pcscd.start()
        named.place(pcscd.port)
        wait_for(lambda: [cue.name for cue in cues] == ["reader-lost", "reader-back"])
        assert reader.status()["connected"]
        # The card still lies there: it must not count again, also once the reopened reader's settle
        # time (1 s, 20 polls) is over.
        wait_polls(reader.status, 30)
        assert len(taps.taps) == 2 and [cue.name for cue in cues] == ["reader-lost", "reader-back"]

        # A card swapped while pcscd is away is one tap once it is back: nothing lost.
        pcscd.stop()
        wait_for(lambda: not reader.status()["connected"])
        pcscd.start()
        blank.place(pcscd.port)
        wait_for(lambda: len(taps.taps) == 3)
        wait_polls(reader.status, 30)  # past the settle time: still one tap
        assert taps.taps[2] == {"uid": "04000000000001", "seat": 2} and len(taps.taps) == 3
    finally:
        reader.stop()
        blank.lift()
        named.lift()
        if pcscd.proc is None:  # stopped by a failure above: the module's other tests need it
            pcscd.start()


def test_enrollment_writes_the_card_id_and_registers_a_read_only_tag_by_its_uid(
    pcscd: Pcscd, tmp_path: Path
) -> None:
    from companion.readers.pcsc import PcscReader

    registry = Registry(tmp_path / "cards.db")
    session = Enrollment(load_catalog()["spy-team"], registry)
    first, second = session.cards[0], session.cards[1]
    reader = PcscReader(f"pcsc:{READER}", debounce=0.2, retry=0.2)
    reader.intercept = session.offer
    reader.start(Taps())
    writable, read_only = tag_with(10), VirtualNtag("04aabbccddeeff", read_only=True)
    try:
        writable.place(pcscd.port)
        wait_for(lambda: session.position == 1)
        writable.lift()
        read_only.place(pcscd.port)
        wait_for(lambda: session.position == 2)
        read_only.lift()
        last = session.progress()["last"]  # a read-only tag: its UID alone, and no write tried
        assert last["uid"] == "04aabbccddeeff" and last["wrote"] is False and last["warning"] == ""
        assert not any(apdu.startswith(b"\xff\xd6") for apdu in read_only.apdus)
        assert registry.lookup(writable.uid.hex()) == first.id
        assert registry.lookup("04aabbccddeeff") == second.id

        # The card id is on the tag now: the reader reads it back as the card itself.
        reader.intercept = None
        taps = Taps()
        reader._tap = taps
        wait_for(lambda: reader.filter.present is None)  # the reader saw the last tag go
        writable.place(pcscd.port)
        wait_for(lambda: taps.taps)
        assert taps.taps == [{"card": first.id, "seat": None}]
        assert any(apdu.startswith(b"\xff\xd6\x00\x04") for apdu in writable.apdus)  # written via FF D6
    finally:
        reader.stop()
        writable.lift()
        read_only.lift()
        registry.close()


def test_a_spy_team_trick_through_companion_run_on_a_pcsc_reader(pcscd: Pcscd, tmp_path: Path) -> None:
    config = tmp_path / "companion.toml"
    config.write_text(f'[reader]\ndevice = "pcsc:{READER}"\ndebounce = 0.3\nretry = 0.2\n')
    with running_companion(tmp_path / "journal.db", "--config", str(config)) as table:

        def reader() -> dict[str, Any]:
            return dict(table.call("GET", "/healthz")["readers"][0])

        wait_for(lambda: reader()["connected"])
        assert (
            reader()["kind"] == "pcsc" and reader()["capabilities"] == "reads and writes the card id (NDEF)"
        )
        events = SseClient(table.url)
        cards = first_trick(table)
        tags = [tag_with(20 + i, card) for i, card in enumerate(cards)]
        try:
            for number, tag in enumerate(tags, start=1):
                tag.place(pcscd.port)
                wait_for(lambda n=number: reader()["taps"] == n)  # type: ignore[misc]
                if number == 1:
                    wait_polls(reader, 20)  # held a while: one card played
                    assert len(table.call("GET", "/api/state")["played"]) == 1
                if number == 2:  # pcscd restarts with the card on the reader: played once
                    pcscd.stop()
                    wait_for(lambda: not reader()["connected"])
                    pcscd.start()
                    tag.place(pcscd.port)
                    wait_for(lambda: reader()["connected"])
                    wait_polls(reader, 30)  # past the reopened reader's settle time
                    assert reader()["taps"] == 2
                tag.lift()
            # The reader counts a tap before the table takes it, and a card's cues follow its state:
            # wait for the state, then for the trick's cue itself.
            wait_for(lambda: table.call("GET", "/api/state")["played"] == cards)

            def cue_names() -> list[str]:
                return [data["cue"] for _, kind, data in events.events if kind == "cue"]

            wait_for(lambda: "trick-won" in cue_names() and cue_names().count("card-accepted") >= 2 + 4)
            cues = [data for _, kind, data in events.events if kind == "cue"]
            names = [cue["cue"] for cue in cues]
            assert names.count("reader-lost") == 1 and names.count("reader-back") == 1
            assert names.count("card-accepted") == 2 + 4  # two missions, four cards: none twice
            [won] = [cue for cue in cues if cue["cue"] == "trick-won"]
            assert won["seat"] == 1
        finally:
            events.close()
            for tag in tags:
                tag.lift()


def test_doctor_finds_the_pcsc_reader_or_names_those_pcscd_lists(pcscd: Pcscd) -> None:
    from companion.appliance.doctor.readers import check_reader

    found = check_reader(f"pcsc:{READER}")
    assert found.line().startswith(f"ok   reader: PC/SC reader {READER}: reads and writes the card id")
    missing = check_reader("pcsc:OMNIKEY 5022")
    assert missing.status == "FAIL" and "pcscd lists: Virtual PCD 00 00, Virtual PCD 00 01" in missing.message
    assert check_reader("auto").message == (
        f"auto looked for pcsc (readers pcscd lists): pcsc:{READER}; "
        "nfcpy (usb; on a Pi a PN532 on the UART): none; pn532:i2c1 (a PN532 at 0x24 on /dev/i2c-1): none; "
        f"it takes pcsc:{READER}"
    )


def test_auto_takes_a_pcsc_reader_that_appears_after_companion_run_started(
    pcscd: Pcscd, tmp_path: Path
) -> None:
    """`auto` asked pcscd once, at start-up: a PC/SC reader that came later was never used. Here the
    reader appears at the real boundary: pcscd (with its vpcd reader) starts after the companion, as
    when pcscd is started or the reader plugged in later; pyscard and pcscd run for real."""
    pcscd.stop()
    config = tmp_path / "companion.toml"
    config.write_text('[reader]\ndevice = "auto"\ndebounce = 0.3\nretry = 0.2\n')
    tag: VirtualNtag | None = None
    try:
        with running_companion(tmp_path / "journal.db", "--config", str(config)) as table:

            def reader() -> dict[str, Any]:
                return dict(table.call("GET", "/healthz")["readers"][0])

            events = SseClient(table.url)
            try:
                searching = reader()  # nothing found yet: the virtual mat, and what it looks for
                assert searching["kind"] == "virtual" and searching["connected"]
                assert searching["searching"][0] == "pcsc (readers pcscd lists)"
                time.sleep(0.5)  # it goes on looking, and finds nothing meanwhile
                assert reader()["kind"] == "virtual"

                pcscd.start()
                # Found (the kind) comes before opened (the path, once it connects): wait for the path.
                wait_for(lambda: reader()["kind"] == "pcsc" and reader()["path"] == READER)
                assert reader()["device"] == f"pcsc:{READER}"
                wait_for(lambda: reader()["connected"])
                card = first_trick(table)[0]
                tag = tag_with(30, card)
                tag.place(pcscd.port)
                wait_for(lambda: table.call("GET", "/api/state")["played"] == [card])

                def cues() -> list[dict[str, Any]]:
                    return [data for _, kind, data in events.events if kind == "cue"]

                # the card's cue reaches the scoreboard's stream a moment after the state changed
                wait_for(lambda: [cue["cue"] for cue in cues()].count("card-accepted") == 2 + 1)
                [found] = [cue for cue in cues() if cue["cue"] == "reader-back"]
                assert found["data"]["found"] == f"pcsc:{READER}"
            finally:
                events.close()
    finally:
        if tag is not None:
            tag.lift()
        if pcscd.proc is None:
            pcscd.start()


def reads(tag: VirtualNtag) -> list[int]:
    """The pages READ BINARY asked the tag for, in order."""
    return [apdu[3] for apdu in tag.apdus if apdu.startswith(b"\xff\xb0")]


def test_a_repeat_tap_is_served_from_the_cache_until_enrollment_rewrites_it(
    pcscd: Pcscd, tmp_path: Path
) -> None:
    from companion.readers.pcsc import PcscReader

    reader = PcscReader(f"pcsc:{READER}", debounce=0, retry=0.2)
    reader.known = KnownTags(life=60)  # long: this is about what is read, not how long an entry lives
    taps = Taps()
    reader.start(taps)
    tag = tag_with(20, "peanuts/secret-police-2")
    registry = Registry(tmp_path / "cards.db")

    def lay_again() -> None:
        tag.lift()
        wait_for(lambda: reader.filter.present is None)
        tag.place(pcscd.port)

    try:
        wait_for(lambda: reader.status()["connected"])
        tag.place(pcscd.port)
        wait_for(lambda: len(taps.taps) == 1)
        assert reads(tag) == [4, 8]  # GET DATA, then the two READ BINARY that cover the card id
        lay_again()
        wait_for(lambda: len(taps.taps) == 2)
        assert taps.taps[1] == {"card": "peanuts/secret-police-2", "seat": None} and reads(tag) == [4, 8]
        session = Enrollment(load_catalog()["spy"], registry, force=True)
        reader.intercept = session.offer
        lay_again()
        wait_for(lambda: session.position == 1)
        reader.intercept = None
        lay_again()
        wait_for(lambda: len(taps.taps) == 3)
        assert taps.taps[2] == {"card": session.cards[0].id, "seat": None}  # read again, not the old id
    finally:
        reader.stop()
        tag.lift()
        registry.close()
