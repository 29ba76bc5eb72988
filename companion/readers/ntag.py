"""The NDEF card id on an NFC Forum Type 2 tag (NTAG21x, MIFARE Ultralight), page by page.

For the reader families whose library gives us pages, not NDEF (PC/SC storage-card commands, the
RC522 and PN532 boards' libraries): `Type2Tag` reads the card id through a `read_pages(page)` that
returns 16 bytes (4 pages, as every such reader does) and writes it through `write_page(page, 4
bytes)`. The layout is the NFC Forum's: the capability container in page 3 (E1, version, data area
size / 8, access), then TLV blocks from page 4, of which the NDEF message TLV (03) is ours.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import ndef

from companion.readers.base import ReaderLink, card_id_from_records

log = logging.getLogger(__name__)

FIRST_DATA_PAGE = 4
MAX_DATA = 888  # bytes of the largest Type 2 data area (NTAG216): a longer TLV is garbage
NDEF_MAGIC = 0xE1
NDEF_TLV, TERMINATOR_TLV, NULL_TLV = 0x03, 0xFE, 0x00

ReadPages = Callable[[int], bytes]  # page -> the 16 bytes from that page on
WritePage = Callable[[int, bytes], None]  # page, 4 bytes


class TagError(Exception):
    """The tag refused a read or write, or left during it."""


def ndef_tlv(card: str) -> bytes:
    """The NDEF TLV holding `card` as the only text record, with the terminator."""
    message = b"".join(ndef.message_encoder([ndef.TextRecord(card, "en")]))
    size = len(message)
    head = bytes([NDEF_TLV, size]) if size < 0xFF else bytes([NDEF_TLV, 0xFF, size >> 8, size & 0xFF])
    return head + message + bytes([TERMINATOR_TLV])


def find_ndef(data: bytes) -> tuple[int, int] | None:
    """Where the NDEF message lies in the data area `data` (from page 4): (offset, length), or None."""
    i = 0
    while i < len(data):
        kind = data[i]
        if kind == NULL_TLV:
            i += 1
            continue
        if kind == TERMINATOR_TLV or i + 1 >= len(data):
            return None
        length, i = data[i + 1], i + 2
        if length == 0xFF:
            if i + 2 > len(data):
                return None
            length, i = int.from_bytes(data[i : i + 2], "big"), i + 2
        if kind == NDEF_TLV:
            return i, length
        i += length
    return None


class Type2Tag:
    """A Type 2 tag on a reader: its UID, the card id on it, and how to write one (`TagLike`).

    Reading the card id takes the READs that cover the NDEF TLV from page 4 and no more (two 16-byte
    READs for every card id of the catalogue); the capability container (page 3: NDEF magic, data
    area size, write access) is read only when a write needs it. A tag that is not Type 2 NDEF (a
    MIFARE Classic refuses the READ, a blank one holds no card id) keeps `card` None and counts by its
    UID. `card` given: the card id is already known (`KnownTags`), nothing is read."""

    def __init__(
        self, uid: str, read_pages: ReadPages, write_page: WritePage | None, *, card: str | None = None
    ) -> None:
        self.uid = uid
        self.card: str | None = card
        self.write_error: str | None = None
        self._read = read_pages
        self._write = write_page
        self._cc: bytes | None = None  # the capability container, once read
        if card is None:
            self.load()

    def load(self) -> None:
        """Read the card id, if the tag carries one."""
        try:
            self.card = self._card_id()
        except TagError as error:
            log.info("tag %s: no readable NDEF area (%s); it counts by its UID", self.uid, error)
        except (ndef.DecodeError, ValueError) as error:
            log.info("tag %s: its NDEF message cannot be read (%s); it counts by its UID", self.uid, error)

    def _header(self) -> bytes:
        if self._cc is None:
            try:
                cc = self._read(3)[:4]
            except TagError:
                cc = b""
            self._cc = cc if len(cc) == 4 and cc[0] == NDEF_MAGIC else b""
        return self._cc

    @property
    def capacity(self) -> int:
        """Bytes of the data area, from the capability container (0: not an NDEF tag)."""
        cc = self._header()
        return cc[2] * 8 if cc else 0

    @property
    def read_only(self) -> bool:
        cc = self._header()
        return not cc or (cc[3] & 0x0F) != 0  # the low nibble: write access (0 granted)

    def _card_id(self) -> str | None:
        data = self._read(FIRST_DATA_PAGE)
        where = find_ndef(data)
        if where is None:
            return None
        offset, length = where
        if offset + length > MAX_DATA:
            raise ValueError(f"an NDEF message of {length} bytes is no card id")
        while len(data) < offset + length:  # the next 16 bytes, after those already read
            data += self._read(FIRST_DATA_PAGE + len(data) // 4)
        return card_id_from_records(list(ndef.message_decoder(data[offset : offset + length])))

    @property
    def writable(self) -> bool:
        return self._write is not None and self.capacity > 0 and not self.read_only

    def write(self, card: str) -> bool:
        """Write `card` as the only NDEF record and read it back; False (and `write_error`) if not."""
        self.write_error = None
        if not self.writable or self._write is None:
            self.write_error = "the tag is read-only" if self.capacity else "the tag has no NDEF area"
            return False
        tlv = ndef_tlv(card)
        if len(tlv) > self.capacity:
            self.write_error = f"it holds {self.capacity} bytes, the card id needs {len(tlv)}"
            return False
        tlv += bytes(-len(tlv) % 4)
        try:
            for i in range(0, len(tlv), 4):
                self._write(FIRST_DATA_PAGE + i // 4, tlv[i : i + 4])
            written = self._card_id()
        except (TagError, ndef.DecodeError, ValueError) as error:
            self.write_error = f"the write failed: {error}; keep the tag still to retry"
            return False
        if written != card:
            self.write_error = "the card id did not read back"
            return False
        self.card = card
        return True

    def __repr__(self) -> str:
        return f"Type2Tag(uid={self.uid!r}, card={self.card!r})"


def identify(
    reader: ReaderLink, held: Type2Tag | None, uid: str, read_pages: ReadPages, write_page: WritePage | None
) -> Type2Tag:
    """The tag `uid` a poll of `reader` met: `held` if it is that tag still on the reader, else a
    new one, named by `reader.known` when that UID was verified lately, else read in full (and
    remembered). Enrollment (`reader.intercept`) always reads in full: it must see what is there."""
    now = time.monotonic()
    known = reader.known
    if held is not None and held.uid == uid:
        known.seen(uid, now)
        return held  # still there: read once per tap
    if reader.intercept is None:
        card = known.card_for(uid, now)
        if card is not None:
            return Type2Tag(uid, read_pages, write_page, card=card)
    generation = known.generation
    tag = Type2Tag(uid, read_pages, write_page)
    known.remember(uid, tag.card, time.monotonic(), generation)
    return tag
