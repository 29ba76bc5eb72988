"""The known-tag cache (companion/readers/known.py) and reading only what names the card
(companion/readers/ntag.py): its rules, what invalidates it (a registry write here or by another
process, enrollment), and that a changed record is never named by its old card id (issue 22)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from companion.games.catalog import load_catalog
from companion.readers.base import ReaderLink
from companion.readers.known import DEFAULT_LIFE, KnownTags
from companion.readers.ntag import TagError, Type2Tag, identify, ndef_tlv
from companion.readers.registry import Registry
from tests.pcsc_card import ntag213

UID = "04a1b2c3d4e5f6"


class Pages:
    """A Type 2 tag's memory behind `read_pages`/`write_page`, counting the READs (by page)."""

    def __init__(self, card: str | None = None) -> None:
        self.memory = ntag213(bytes.fromhex(UID))
        self.reads: list[int] = []
        if card is not None:
            self.rewrite(card)

    def rewrite(self, card: str) -> None:
        """Another device (a phone) writes `card` on it."""
        tlv = ndef_tlv(card)
        self.memory[16 : 16 + len(tlv)] = tlv

    def read(self, page: int) -> bytes:
        self.reads.append(page)
        if page * 4 >= len(self.memory):
            raise TagError("no such page")
        return bytes(self.memory[page * 4 : page * 4 + 16])

    def write(self, page: int, data: bytes) -> None:
        self.memory[page * 4 : page * 4 + 4] = data


def test_the_cache_answers_while_its_tag_keeps_being_seen() -> None:
    known = KnownTags(life=1.0)
    assert known.card_for(UID, 0.0) is None
    known.remember(UID, "spy/red", 0.0)
    assert known.card_for(UID, 0.9) == "spy/red"  # and its clock restarts
    known.seen(UID, 1.8)  # a held card's poll
    assert known.card_for(UID, 2.7) == "spy/red"
    assert known.card_for(UID, 3.8) is None  # away for longer than its life: read it again
    assert known.card_for(UID, 3.9) is None  # and the stale entry is gone
    known.remember(UID, None, 4.0)  # a tag with no card id on it is never cached
    assert known.card_for(UID, 4.0) is None and len(known) == 0
    assert DEFAULT_LIFE <= 1.0  # shorter than any rewrite by another device: docs/nfc.md


def test_forget_one_or_all_and_a_read_begun_before_a_forget_is_not_kept() -> None:
    known = KnownTags()
    known.remember(UID, "spy/red", 0.0)
    known.remember("04ffffffffffff", "spy/blue", 0.0)
    known.forget(UID)
    assert known.card_for(UID, 0.1) is None and known.card_for("04ffffffffffff", 0.1) == "spy/blue"
    known.forget()
    assert known.card_for("04ffffffffffff", 0.1) is None
    before = known.generation
    known.forget(UID)  # enrollment wrote the tag while a poll was reading it
    known.remember(UID, "spy/red", 0.2, before)
    assert known.card_for(UID, 0.2) is None
    known.remember(UID, "spy/red", 0.3, known.generation)
    assert known.card_for(UID, 0.3) == "spy/red"


def test_every_registry_write_forgets_all_even_one_by_another_process(tmp_path: Path) -> None:
    registry = Registry(tmp_path / "cards.db")
    known = KnownTags(stamp=registry.generation)
    try:
        for change in (
            lambda: registry.register("0a0b0c0d", "spy/red"),
            lambda: registry.forget("0a0b0c0d"),
            lambda: registry.import_({"version": 1, "tags": [{"uid": "0a0b0c0e", "card": "spy/red"}]}),
        ):
            known.remember(UID, "spy/red", 0.0)
            change()
            assert known.card_for(UID, 0.1) is None
        known.remember(UID, "spy/red", 0.0)
        assert known.card_for(UID, 0.1) == "spy/red"  # nothing changed: still known
        other = sqlite3.connect(tmp_path / "cards.db")  # `companion cards import` beside the service
        with other:
            other.execute("INSERT INTO tags VALUES ('0a0b0c0f', 'spy/blue', 0, '2026-01-01T00:00:00Z')")
        other.close()
        assert known.card_for(UID, 0.2) is None
    finally:
        registry.close()


def test_the_card_id_takes_the_reads_that_cover_it_and_no_more() -> None:
    pages = Pages("peanuts/secret-police-2")
    assert Type2Tag(UID, pages.read, None).card == "peanuts/secret-police-2"
    assert pages.reads == [4, 8]  # its TLV is 32 bytes: page 4 once, then page 8
    short = Pages("spy/red")  # a TLV of 16 bytes: one READ
    assert Type2Tag(UID, short.read, None).card == "spy/red" and short.reads == [4]
    blank = Pages()
    tag = Type2Tag(UID, blank.read, blank.write)
    assert tag.card is None and blank.reads == [4]
    assert tag.writable and tag.capacity == 144 and blank.reads == [4, 3]  # the CC only to write


@pytest.mark.parametrize("game", sorted(load_catalog()))
def test_every_shipped_card_id_fits_in_two_reads_from_page_4(game: str) -> None:
    cards = load_catalog()[game].cards
    assert cards
    for card in cards:
        tlv = ndef_tlv(card)[:-1]  # the terminator need not be read
        assert len(tlv) <= 32, f"{card}: its TLV is {len(tlv)} bytes"


class Link(ReaderLink):
    """A reader, only for what `identify` takes from it (its `known` and `intercept`)."""


def test_a_repeat_tap_is_served_from_the_cache_and_enrollment_reads_in_full() -> None:
    reader, pages = Link("test"), Pages("spy/red-1")
    first = identify(reader, None, UID, pages.read, pages.write)
    assert first.card == "spy/red-1" and pages.reads == [4, 8]
    assert identify(reader, first, UID, pages.read, pages.write) is first  # held: nothing read
    again = identify(reader, None, UID, pages.read, pages.write)  # lifted and laid again
    assert again.card == "spy/red-1" and pages.reads == [4, 8] and reader.known.hits == 1
    reader.intercept = lambda tag: None  # enrollment: it must see what the tag holds
    assert identify(reader, None, UID, pages.read, pages.write).card == "spy/red-1"
    assert pages.reads == [4, 8, 4, 8]


def test_a_tag_whose_record_changed_is_never_named_by_its_old_card_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr("companion.readers.ntag.time.monotonic", lambda: clock[0])
    reader, pages = Link("test"), Pages("spy/red-1")
    assert identify(reader, None, UID, pages.read, pages.write).card == "spy/red-1"
    # Written through the companion: enrollment takes the tag and the reader forgets its UID.
    reader.intercept = lambda tag: tag.write("spy/red-2")
    reader._deliver(identify(reader, None, UID, pages.read, pages.write))
    reader.intercept = None
    assert identify(reader, None, UID, pages.read, pages.write).card == "spy/red-2"
    # Rewritten by a phone: the tag left this reader for longer than an entry lives.
    pages.rewrite("spy/blue-3")
    clock[0] += reader.known.life + 0.01
    assert identify(reader, None, UID, pages.read, pages.write).card == "spy/blue-3"
    # Torn by another device: no card id on it any more, and none remembered for it.
    pages.memory[18:40] = bytes(22)
    clock[0] += reader.known.life + 0.01
    assert identify(reader, None, UID, pages.read, pages.write).card is None
    assert identify(reader, None, UID, pages.read, pages.write).card is None and len(reader.known) == 0
