"""PC/SC readers through `pcscd` and pyscard (`pcsc:<reader name or part of it>`; docs/nfc.md).

An ACR122U, ACR1252U or HID Omnikey 5022 is a PC/SC reader: `pcscd` (Debian's `pcscd` with its CCID
driver) owns the USB device and any number of programs share it through pyscard. A contactless tag
appears as a "card" in the reader; the PC/SC part 3 pseudo-APDUs every such reader implements give
its UID (`FF CA 00 00 00`) and its pages (`FF B0 00 <page> 10` reads 16 bytes, `FF D6 00 <page> 04`
writes one page), so the card id of an NTAG21x is read and written here like on any reader
(`companion.readers.ntag`). A tap is GET DATA for the UID, then, for a UID `KnownTags` does not
know, READ BINARY from page 4 and a second from page 8 only if the record goes on. A tag that is
not a Type 2 tag counts by its UID.

pyscard is an optional extra (`pip install 'table-companion[pcsc]'`), imported only by this module.
"""

from __future__ import annotations

import logging
from typing import Any

from companion.readers.base import NDEF_READ_WRITE, PolledReader, ReaderLost
from companion.readers.ntag import TagError, Type2Tag, identify

log = logging.getLogger(__name__)

GET_UID = [0xFF, 0xCA, 0x00, 0x00, 0x00]
OK = (0x90, 0x00)


def _pyscard() -> Any:
    try:
        import smartcard.System
    except ImportError as error:
        raise ReaderLost(f"pyscard is not installed ({error}): pip install 'table-companion[pcsc]'") from None
    return smartcard.System


def reader_names() -> list[str]:
    """The readers pcscd lists now; `ReaderLost` if pcscd does not answer."""
    system = _pyscard()
    try:
        return [str(reader) for reader in system.readers()]
    except Exception as error:  # pyscard raises its own exceptions for "no service" and friends
        raise ReaderLost(
            f"pcscd does not answer ({error}): is it running? (systemctl status pcscd)"
        ) from None


def matching(names: list[str], wanted: str) -> str | None:
    """The first reader whose name contains `wanted` (any case); "" matches the first reader."""
    return next((name for name in names if wanted.lower() in name.lower()), None)


def _release(card: Any) -> None:
    """Let go of a card connection and its PC/SC context, even when pcscd is gone."""
    try:
        card.release()
    except Exception as error:  # pcscd went away: its context went with it
        log.debug("releasing the card: %s", error)
        card.component.hcontext = None  # or pyscard's destructor tries again, noisily


def probe(device: str) -> str:
    """The full name of the reader a `pcsc:` device names; `ReaderLost` saying why there is none."""
    wanted = device.partition(":")[2]
    names = reader_names()
    name = matching(names, wanted)
    if name is None:
        raise ReaderLost(f"no PC/SC reader named like {wanted!r} (pcscd lists: {', '.join(names) or 'none'})")
    return name


class PcscReader(PolledReader):
    """The PC/SC reader whose name contains `device`'s part after `pcsc:`."""

    kind = "pcsc"
    capabilities = NDEF_READ_WRITE
    settle = 1.0  # pcscd looks for a card every 0.4 s on readers without card-change interrupts
    # An empty poll is two calls to pcscd (list the readers, connect: no card), no APDU.
    poll_interval = 0.05

    def __init__(self, device: str, seat: int | None = None, **settings: Any) -> None:
        super().__init__(device, seat, **settings)
        self.wanted = device.partition(":")[2]
        self.name: str | None = None  # the reader's full name, once found
        self._card: Any = None  # the connection to the tag on the reader
        self._tag: Type2Tag | None = None

    def status(self) -> dict[str, Any]:
        return {**super().status(), "path": self.name}

    def _connect(self) -> None:
        self.name = probe(self.device)

    def _disconnect(self) -> None:
        self._release()

    def _read(self) -> Any:
        if self._card is not None:
            uid = self._uid_or_none()
            if uid is not None and self._tag is not None and uid == self._tag.uid:
                return identify(self, self._tag, uid, self._read_pages, self._write_page)  # still there
            self._release()
        reader = self._listed()
        try:
            self._card = self._open_card(reader)
        except Exception:  # no card on the reader (NoCardException); a reader gone: the next poll
            self._card = None
            return None
        uid = self._uid_or_none()
        if uid is None:
            self._release()
            return None
        self._tag = identify(self, None, uid, self._read_pages, self._write_page)
        return self._tag

    def _listed(self) -> Any:
        """This reader as pcscd lists it now; `ReaderLost` if pcscd or the reader is gone."""
        system = _pyscard()
        try:
            readers = system.readers()
        except Exception as error:  # pyscard's own exceptions for "no service"
            raise ReaderLost(f"pcscd does not answer ({error})") from None
        reader = next((r for r in readers if str(r) == self.name), None)
        if reader is None:
            raise ReaderLost(f"the PC/SC reader {self.name!r} is gone")
        return reader

    def _open_card(self, reader: Any) -> Any:
        card = reader.createConnection()
        try:
            card.connect()
        except Exception:
            _release(card)
            raise
        return card

    def _uid_or_none(self) -> str | None:
        try:
            data, sw1, sw2 = self._card.transmit(GET_UID)
        except Exception:  # the tag left (or the reader did: the next connect tells)
            return None
        return bytes(data).hex() if (sw1, sw2) == OK and data else None

    def _release(self) -> None:
        card, self._card, self._tag = self._card, None, None
        if card is not None:
            _release(card)

    def _transmit(self, apdu: list[int]) -> bytes:
        try:
            data, sw1, sw2 = self._card.transmit(apdu)
        except Exception as error:
            raise TagError(str(error)) from None
        if (sw1, sw2) != OK:
            raise TagError(f"the reader answered {sw1:02X} {sw2:02X}")
        return bytes(data)

    def _read_pages(self, page: int) -> bytes:
        data = self._transmit([0xFF, 0xB0, 0x00, page, 0x10])
        if len(data) != 16:
            raise TagError(f"read {len(data)} bytes, not 16")
        return data

    def _write_page(self, page: int, data: bytes) -> None:
        self._transmit([0xFF, 0xD6, 0x00, page, 0x04, *data])
