"""What one poll of an nfcpy reader sends: activation, the READs that name the card, presence.

nfcpy's `ContactlessFrontend.connect` discovers a tag in full before it hands it over (the
Ultralight-C probe, GET_VERSION, the capability container), and its PN53x driver wraps every tag
command in three more (read and write the CIU mode registers, set the response timeout) after
switching the chip's CRC check off and on. A card id needs none of that. Here, still through
nfcpy's own drivers and without patching them:

- `ChipLink`, for the readers on NXP's PN53x (a PN532 on the UART, PN533 and ACR122U on USB): the
  driver's own chipset calls, one chip command each: InListPassiveTarget activates a 106A tag (UID,
  SENS_RES, SEL_RES), InDataExchange sends it a READ (the chip adds and checks the CRC itself);
- `FrontendLink`, for every other driver: nfcpy's public low-level calls, `clf.sense` and
  `clf.exchange`, which cost what that driver makes them cost.

A READ that goes unanswered (the tag left, or sits at the edge of the field) raises `Gone`: the
poll is repeated and nothing is counted; a READ the tag refuses raises `ntag.TagError`: it counts
by its UID.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import nfc
import nfc.clf
import nfc.clf.pn53x
import nfc.tag

from companion.readers.ntag import TagError

log = logging.getLogger(__name__)

READ = 0x30  # Type 2 tag READ: 16 bytes (4 pages) from the page given
READ_TIMEOUT = 0.5  # seconds the host waits for the chip's answer (the chip times the tag out itself)
# PN53x status codes of a command the tag did not (clearly) answer: timeout, CRC, parity, bit count,
# framing, collision. Any other status is a refusal.
NO_ANSWER = frozenset({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0B})
CRC_ON = 0x80  # CIU_RxMode's RxCRCEn bit


class Gone(Exception):
    """The tag did not answer a command: it left, or lies at the edge of the field."""


@dataclass
class Seen:
    """A tag a poll activated: its UID (hex) and, for a 106A tag, its SEL_RES (SAK)."""

    uid: str
    sak: int | None = None
    target: Any = None  # nfcpy's RemoteTarget (`FrontendLink`)

    @property
    def type2(self) -> bool:
        """An NFC Forum Type 2 tag (NTAG21x, MIFARE Ultralight), or a MIFARE Classic (SAK 0x08),
        which nfcpy takes for one."""
        return self.sak is not None and self.sak & 0x60 == 0

    @property
    def classic(self) -> bool:
        """A MIFARE Classic card: its memory needs an authentication nfcpy does not do."""
        return self.sak is not None and bool(self.sak & 0x08)


def cascade(uid: bytes) -> bytes:
    """A UID as InListPassiveTarget takes it: with the cascade tags of ISO 14443-3 (as nfcpy does)."""
    if len(uid) > 4:
        uid = b"\x88" + uid
    if len(uid) > 8:
        uid = uid[0:4] + b"\x88" + uid[4:]
    return uid


class ChipLink:
    """A PN53x reader through its nfcpy chipset: one chip command per poll, READ and presence check."""

    def __init__(self, clf: Any) -> None:
        self.clf = clf
        self.chipset = clf.device.chipset

    @staticmethod
    def fits(clf: Any) -> bool:
        chipset = getattr(clf.device, "chipset", None)
        return isinstance(clf.device, nfc.clf.pn53x.Device) and 0 in getattr(
            chipset, "in_list_passive_target_brty_range", ()
        )

    def _list(self, uid: bytes = b"") -> Seen | None:
        with self.clf.lock:
            answer = self.chipset.in_list_passive_target(1, 0, uid)
        if answer is None or len(answer) < 4:
            return None
        # SENS_RES (2), SEL_RES (1), the UID's length, the UID
        return Seen(bytes(answer[4 : 4 + answer[3]]).hex(), answer[2])

    def poll(self) -> Seen | None:
        """Activate the 106A tag in the field, if any (InListPassiveTarget, nothing else)."""
        return self._list()

    def present(self, seen: Seen) -> bool:
        """Is the tag `seen` still there? Selected again by its UID, so another card laid beside it
        does not answer in its place."""
        again = self._list(cascade(bytes.fromhex(seen.uid)))
        return again is not None and again.uid == seen.uid

    def read(self, page: int) -> bytes:
        """The 16 bytes from `page` of the tag the last poll activated."""
        try:
            with self.clf.lock:
                data, _ = self.chipset.in_data_exchange(bytes([READ, page]), READ_TIMEOUT)
        except nfc.clf.pn53x.Chipset.Error as error:
            if error.errno in NO_ANSWER:
                raise Gone(str(error)) from error
            raise TagError(f"READ {page} refused ({error})") from error
        if len(data) != 16:
            raise TagError(f"READ {page} answered {len(data)} bytes")
        return bytes(data)

    def full_tag(self, seen: Seen) -> Any:
        """nfcpy's own tag object for `seen` (enrollment writes through it), or None if it left."""
        target = self.clf.sense(nfc.clf.RemoteTarget("106A", sel_req=bytes.fromhex(seen.uid)))
        return nfc.tag.activate(self.clf, target) if target is not None else None

    def after_full_tag(self) -> None:
        """nfcpy switched the chip's CRC check off for its Type 2 tag code: on again for InDataExchange."""
        with self.clf.lock:
            mode = self.chipset.read_register("CIU_RxMode")
            if not mode & CRC_ON:
                self.chipset.write_register("CIU_RxMode", mode | CRC_ON)


class FrontendLink:
    """Any other nfcpy driver, through `clf.sense` and `clf.exchange`."""

    def __init__(self, clf: Any, targets: list[str]) -> None:
        self.clf = clf
        self.targets = [nfc.clf.RemoteTarget(kind) for kind in targets]

    def poll(self) -> Seen | None:
        target = self.clf.sense(*self.targets)
        if target is None:
            return None
        if target.sdd_res is not None:  # 106A
            return Seen(bytes(target.sdd_res).hex(), target.sel_res[0], target)
        if target.sensf_res is not None:  # 212F/424F: the IDm
            return Seen(bytes(target.sensf_res[1:9]).hex(), None, target)
        if target.rid_res is not None:  # a Type 1 tag: UID0-3 of its RID response
            return Seen(bytes(target.rid_res[2:6]).hex(), None, target)
        return Seen(bytes(target.sensb_res[1:5]).hex() if target.sensb_res else "", None, target)

    def present(self, seen: Seen) -> bool:
        """A 106A tag: selected again by its UID (nfcpy's own check reads page 0: a MIFARE Classic
        refuses it). Other kinds are held by nfcpy's tag object (`NfcReader`)."""
        wanted = nfc.clf.RemoteTarget("106A", sel_req=bytes.fromhex(seen.uid))
        return self.clf.sense(wanted) is not None

    def read(self, page: int) -> bytes:
        try:
            data = self.clf.exchange(bytes([READ, page]), 0.1)
        except (nfc.clf.TimeoutError, nfc.clf.TransmissionError) as error:
            raise Gone(str(error)) from error
        if len(data) != 16:  # a 4-bit NAK comes back as one byte
            raise TagError(f"READ {page} refused ({bytes(data).hex()})")
        return bytes(data)

    def full_tag(self, seen: Seen) -> Any:
        if seen.type2:  # sensed again, so that nfcpy's activation starts from a fresh selection
            target = self.clf.sense(nfc.clf.RemoteTarget("106A", sel_req=bytes.fromhex(seen.uid)))
        else:
            target = seen.target
        return nfc.tag.activate(self.clf, target) if target is not None else None

    def after_full_tag(self) -> None:
        """nfcpy's `sense` and `exchange` set the chip up themselves before each command."""


Link = ChipLink | FrontendLink


def link_for(clf: Any, targets: list[str]) -> Link:
    """The cheapest way to reach tags through `clf`: the chipset for a PN53x polling 106A only."""
    if targets == ["106A"] and ChipLink.fits(clf):
        return ChipLink(clf)
    return FrontendLink(clf, targets)
