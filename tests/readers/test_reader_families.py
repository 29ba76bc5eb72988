"""What every reader family shares: the device schemes and their settings, and the card id on a
Type 2 tag's pages (companion/readers/families.py, base.py, ntag.py)."""

from __future__ import annotations

import ndef
import pytest

from companion.core.config import ConfigError
from companion.readers.base import CommonSettings
from companion.readers.families import readers_from_config, scheme
from companion.readers.ntag import TagError, Type2Tag, ndef_tlv
from tests.pcsc_card import ntag213


@pytest.mark.parametrize(
    ("device", "kind"),
    [
        ("PCSC:ACR", "pcsc"),
        ("RC522:spi0.1", "rc522"),
        ("pn532:I2C1", "pn532-i2c"),
        ("hid:/dev/x", "keyboard"),
    ],
)
def test_the_scheme_chooses_the_family_whatever_its_case(device: str, kind: str) -> None:
    [reader] = readers_from_config([{"device": device}])  # made, not opened
    assert reader.status()["kind"] == kind and reader.status()["connected"] is False


def test_settings_are_checked_per_family() -> None:
    assert scheme("PCSC:ACR1252") == "pcsc" and scheme("auto") == "auto"
    with pytest.raises(ConfigError, match="unknown keys: uid_format"):
        readers_from_config([{"device": "pcsc:ACR", "uid_format": "hex"}])
    with pytest.raises(ConfigError, match="seat number"):
        readers_from_config([{"device": "pcsc:ACR", "seat": -1}])
    settings = CommonSettings.parse({"device": "pcsc:ACR", "seat": 2, "debounce": 0.5, "retry": 0})
    assert (settings.seat, settings.debounce, settings.retry) == (2, 0.5, 0.05)  # retry has a floor
    [reader] = readers_from_config([{"device": "pcsc:ACR", "seat": 3}])
    assert reader.status()["kind"] == "pcsc" and reader.status()["seat"] == 3


class Pages:
    """A Type 2 tag's memory read 16 bytes and written 4 bytes at a time, as readers do."""

    def __init__(self, memory: bytearray) -> None:
        self.memory = memory

    def read(self, page: int) -> bytes:
        if page * 4 >= len(self.memory):
            raise TagError("no such page")
        return bytes((self.memory + self.memory)[page * 4 : page * 4 + 16])

    def write(self, page: int, data: bytes) -> None:
        self.memory[page * 4 : page * 4 + 4] = data


def test_a_long_card_id_needs_several_reads_and_a_small_tag_refuses_it() -> None:
    pages = Pages(ntag213(bytes(7)))
    tag = Type2Tag("04", pages.read, pages.write)
    assert tag.card is None and tag.writable and tag.capacity == 144
    card = "peanuts/" + "x" * 40  # longer than one 16-byte read
    assert tag.write(card) and Type2Tag("04", pages.read, None).card == card
    small = bytearray(pages.memory)
    small[14] = 2  # a data area of 16 bytes
    tag = Type2Tag("04", Pages(small).read, Pages(small).write)
    assert not tag.write("spy-team/red-17") and tag.write_error is not None
    assert "holds 16 bytes" in tag.write_error


def test_a_foreign_or_torn_ndef_message_counts_by_uid() -> None:
    memory = ntag213(bytes(7))
    url = b"".join(ndef.message_encoder([ndef.UriRecord("https://example.org")]))
    memory[16 : 16 + len(url) + 3] = bytes([0x03, len(url)]) + url + b"\xfe"
    assert Type2Tag("04", Pages(memory).read, None).card is None  # not a card id
    torn = ntag213(bytes(7))
    tlv = ndef_tlv("spy-team/red-17")
    torn[16 : 16 + 8] = tlv[:8]  # the write was cut short: the length promises more than there is
    torn[24:40] = bytes(16)
    assert Type2Tag("04", Pages(torn).read, None).card is None
