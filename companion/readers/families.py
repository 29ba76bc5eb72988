"""Which reader family a `[reader]` / `[[readers]]` entry names, by its device scheme (docs/nfc.md).

| scheme | family | module |
|---|---|---|
| `usb:`, `tty:`, `udp:` | nfcpy (RC-S380, ACR122U direct, PN532 on a UART) | `companion.readers.nfc` |
| `pcsc:<name or part>` | PC/SC readers via pcscd (ACR122U, ACR1252U, Omnikey) | `companion.readers.pcsc` |
| `hid:<evdev path>` | USB keyboard readers (UID only) | `companion.readers.keyboard` |
| `pn532:i2c1`, `pn532:spi0.0` | a PN532 board on the Pi's I2C or SPI bus | `companion.readers.pn532` |
| `rc522:spi0.0`, `rc522:spi0.1` | an RC522 (MFRC522) board on the Pi's SPI bus | `companion.readers.rc522` |
| `virtual` | the virtual mat | `companion.readers.VirtualReader` |
| `auto` | the first reader `AUTO_SEARCH` finds, in its order; until then `AutoReader` looks again | |

Every family but nfcpy is a `PolledReader` (`companion.readers.base`): the tap rule, reconnects,
cues, seats and enrollment are the same code. Each family's library is imported only when an entry
uses it, so a laptop install needs none of them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from companion.core.cues import Cue
from companion.readers import Reader, TapHandler
from companion.readers.base import COMMON_KEYS, CommonSettings, PolledReader, ReaderLink, ReaderLost
from companion.readers.health import LinkWatch
from companion.readers.known import KnownTags

log = logging.getLogger(__name__)

NFCPY_SCHEMES = ("usb", "tty", "udp")
FAMILY_SCHEMES = ("pcsc", "hid", "pn532", "rc522")


def scheme(device: str) -> str:
    return device.partition(":")[0].lower()


def family_reader(entry: dict[str, Any], watch: LinkWatch) -> PolledReader:
    """The reader of a `pcsc:`, `pn532:`, `rc522:` or `hid:` entry, its settings checked."""
    device = str(entry.get("device"))
    if scheme(device) == "pcsc":
        from companion.readers.pcsc import PcscReader

        common = CommonSettings.parse(entry)
        return PcscReader(common.device, common.seat, watch=watch, **common.timing())
    if scheme(device) == "pn532":
        from companion.readers.pn532 import Pn532Reader

        common = CommonSettings.parse(entry)
        return Pn532Reader(common.device, common.seat, watch=watch, **common.timing())
    if scheme(device) == "rc522":
        from companion.pins.devices import rc522_reset_pin
        from companion.readers.rc522 import Rc522Reader

        common = CommonSettings.parse(entry, extra=("reset_pin",))
        return Rc522Reader(
            common.device, common.seat, reset_pin=rc522_reset_pin(entry), watch=watch, **common.timing()
        )
    from companion.readers.keyboard import KeyboardReader

    common = CommonSettings.parse(entry, extra=("uid_format",))
    return KeyboardReader(
        common.device, common.seat, uid_format=entry.get("uid_format", "hex"), watch=watch, **common.timing()
    )


# What `auto` looks for


@dataclass(frozen=True)
class Found:
    """A reader `auto` found: its device as a config names it, and for nfcpy the frontend the search
    opened, handed on to the reader as it is (never closed and reopened in between: an ACR122U)."""

    device: str
    clf: Any = None

    def close(self) -> None:
        if self.clf is not None:
            from companion.readers.frontend import close_frontend

            close_frontend(self.clf)


def find_pcsc() -> Found | None:
    """The first reader pcscd lists now; None without pyscard or pcscd."""
    try:
        from companion.readers.pcsc import reader_names

        names = reader_names()
    except ReaderLost as why:
        log.debug("no PC/SC reader: %s", why)
        return None
    return Found(f"pcsc:{names[0]}") if names else None


def find_nfcpy() -> Found | None:
    """A reader nfcpy's own search opens: USB (RC-S380, ACR122U), and on a Pi a PN532 on the UART."""
    from companion.readers.nfc import search_reader

    found = search_reader()
    return None if found is None else Found(found[0], found[1])


def find_pn532_i2c() -> Found | None:
    """A PN532 answering at 0x24 on I2C bus 1; looked for only when /dev/i2c-1 exists and the pn532
    extra is installed (a PN532 frame at that address is harmless to any other I2C device)."""
    from companion.readers.pn532 import probe

    try:
        log.debug("found a %s", probe("pn532:i2c1"))
    except ReaderLost as why:
        log.debug("no PN532 on I2C: %s", why)
        return None
    return Found("pn532:i2c1")


# What `auto` looks for, in this order (docs/nfc.md): pcscd owns the CCID readers it lists, so PC/SC
# comes before nfcpy's USB search. One line per family: (what the logs and /healthz call it, finder).
AUTO_SEARCH: tuple[tuple[str, Callable[[], Found | None]], ...] = (
    ("pcsc (readers pcscd lists)", find_pcsc),
    ("nfcpy (usb; on a Pi a PN532 on the UART)", find_nfcpy),
    ("pn532:i2c1 (a PN532 at 0x24 on /dev/i2c-1)", find_pn532_i2c),
)
# What `auto` never probes, and why: the operator names it in `device`.
NOT_PROBED = (
    "keyboard readers (hid:), which cannot be told from a keyboard, and boards on SPI (pn532:spi0.0, "
    "rc522:spi0.0), as a wrong protocol on an unknown SPI device is not harmless: name them in "
    "[reader] device"
)


def searched() -> list[str]:
    return [name for name, _ in AUTO_SEARCH]


def _look(name: str, finder: Callable[[], Found | None]) -> Found | None:
    try:
        return finder()
    except Exception:  # a family's library failing in an unforeseen way must not end the search
        log.exception("looking for %s failed", name)
        return None


def search() -> Found | None:
    """The first reader `AUTO_SEARCH` finds now, in its order."""
    for name, finder in AUTO_SEARCH:
        found = _look(name, finder)
        if found is not None:
            log.info("auto found %s (%s)", found.device, name)
            return found
    return None


def find_device() -> str | None:
    """The device `auto` would take now, let go again (the installer, `cards enroll`)."""
    found = search()
    if found is None:
        return None
    found.close()
    return found.device


def look_everywhere() -> list[tuple[str, str | None]]:
    """What each family of `AUTO_SEARCH` finds now, each let go again (doctor)."""
    results: list[tuple[str, str | None]] = []
    for name, finder in AUTO_SEARCH:
        found = _look(name, finder)
        if found is not None:
            found.close()
        results.append((name, None if found is None else found.device))
    return results


def found_reader(entry: dict[str, Any], found: Found, watch: LinkWatch) -> Reader:
    """The reader of the family `auto` found, with the entry's settings that family takes."""
    if scheme(found.device) in FAMILY_SCHEMES:
        common = {key: value for key, value in entry.items() if key in COMMON_KEYS}
        return family_reader({**common, "device": found.device}, watch)
    from companion.readers.nfc import ReaderSettings

    return ReaderSettings.parse(entry).reader(watch, clf=found.clf, found=found.device)


class AutoReader:
    """`device = "auto"` when nothing was found at start-up: stands for the virtual mat and looks
    again every `retry` seconds, then becomes the first reader found (the reader-back cue says so)
    and from then on is that reader, with its own lost/back cues."""

    def __init__(self, entry: dict[str, Any], seat: int | None, retry: float, watch: LinkWatch) -> None:
        self.entry = entry
        self.device = "auto"
        self.seat = seat
        self.retry = retry
        self.watch = watch
        self.found: Any = None  # the reader found, once there is one
        self.known = KnownTags()  # handed to the reader found (`readers_from_config` shares one)
        self._intercept: Callable[[Any], Any] | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def intercept(self) -> Callable[[Any], Any] | None:
        return self._intercept

    @intercept.setter
    def intercept(self, value: Callable[[Any], Any] | None) -> None:
        """Enrollment takes the tags of the reader found, now or once it is found."""
        with self._lock:
            self._intercept = value
            if self.found is not None:
                self.found.intercept = value

    def start(self, tap: TapHandler) -> None:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, args=(tap,), name="auto search", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)  # a search in progress ends first (nfcpy's USB, I2C)
            self._thread = None
        if self.found is not None:
            self.found.stop()

    def _run(self, tap: TapHandler) -> None:
        while not self._stopping.wait(self.retry):
            found = search()
            if found is None:
                continue
            if self._stopping.is_set():
                found.close()
                return
            reader = found_reader(self.entry, found, self.watch)
            with self._lock:
                reader.intercept = self._intercept  # type: ignore[attr-defined]
                share_known(reader, self.known)
                self.found = reader
            log.warning("auto found a reader at %s: taps now come from it", found.device)
            self.watch.found(self, found.device)
            reader.start(tap)
            return

    def status(self) -> dict[str, Any]:
        if self.found is not None:
            return dict(self.found.status())
        return {
            "kind": "virtual",  # until a reader is found: the virtual mat
            "device": self.device,
            "connected": True,
            "seat": self.seat,
            "error": None,
            "searching": searched(),
        }


def auto_reader(entry: dict[str, Any], watch: LinkWatch) -> Reader:
    """The reader `auto` finds now, or an `AutoReader` that keeps looking."""
    from companion.readers.nfc import ReaderSettings

    settings = ReaderSettings.parse(entry)  # `auto` may become an nfcpy reader: its keys are allowed
    found = search()
    if found is not None:
        return found_reader(entry, found, watch)
    log.info(
        "no reader found (looked for %s): the virtual reader stands in, looking again every %.1f s; "
        "not probed: %s",
        "; ".join(searched()),
        settings.retry,
        NOT_PROBED,
    )
    return AutoReader(entry, settings.seat, settings.retry, watch)


def readers_from_config(
    entries: Sequence[dict[str, Any]],
    announce: Callable[[Cue], None] | None = None,
    known: KnownTags | None = None,
) -> list[Reader]:
    """One reader per entry, by its device's scheme; `announce` plays their reader-lost/back cues
    (one `LinkWatch` for the table: "reader-back" once every reader answers again). Every reader
    shares `known`, the verified UIDs (one of its own if not given)."""
    watch = LinkWatch(announce)
    known = known if known is not None else KnownTags()
    readers: list[Reader] = []
    for entry in entries:
        device = str(entry.get("device", "auto"))
        family = scheme(device)
        if device == "auto":
            readers.append(auto_reader(entry, watch))
        elif family in FAMILY_SCHEMES:
            readers.append(family_reader(entry, watch))
        else:
            from companion.readers.nfc import readers_from_config as nfcpy_readers

            readers.extend(nfcpy_readers([entry], announce, watch=watch))
    for reader in readers:
        share_known(reader, known)
    return readers


def share_known(reader: Any, known: KnownTags) -> None:
    """Give `reader` (or the one an `AutoReader` finds later) the shared `known`."""
    if isinstance(reader, ReaderLink | AutoReader):
        reader.known = known


def main() -> int:
    """`python -m companion.readers.families`: print the device `auto` finds now, in the order of
    `AUTO_SEARCH` (the installer writes it into the config); exit status 1 if none."""
    logging.getLogger("nfc").setLevel(logging.CRITICAL)
    found = find_device()
    if found is None:
        return 1
    print(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
