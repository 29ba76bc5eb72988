"""Opening and closing nfcpy readers so that they survive a real table (see docs/nfc.md, "Recovery").

nfcpy 1.0.4 is unmaintained and pinned; what it gets wrong for a long-running daemon is mended here,
at the driver boundary, and nowhere else:

- a serial PN532 (`tty:PORT:pn532`) is opened by `open_serial_pn532`, not by nfcpy's search:
  nfcpy's search opens the port without O_NOCTTY (a daemon started as a session leader would make
  the reader its controlling terminal and die of SIGHUP when it is unplugged), raises the chip to
  921600 baud and only lowers it again in `close()` (after a `kill -9` the chip stays at 921600 and
  no later open finds it). Here the port is opened by pyserial (O_NOCTTY) with an exclusive lock
  (a second process, such as `companion cards enroll` beside the service, is refused instead of
  talking over it), a chip left at a higher rate is brought back to 115200, and the rate is never
  raised: a tap costs about 12.5 ms on the line at 115200, 1.3 ms at 921600 (bench/pn532_serial.py),
  which a player does not notice;
- an ACR122U is closed without the PowerDown nfcpy sends (`Acr122Device`): many cannot be
  reopened after it until they are replugged (nfcpy issues #154, #239, #243, #251, #231);
- `close_frontend` closes a reader that has vanished without raising (a hung-up tty's termios
  calls fail) and always releases its port.

Other paths (`usb...`, `udp...`, other serial drivers) open through nfcpy as they are.
"""

from __future__ import annotations

import errno
import glob
import logging
import re
import time
from typing import Any

import nfc
import nfc.clf
import nfc.clf.acr122
import nfc.clf.pn53x
import nfc.clf.pn532
import nfc.clf.transport
import serial

log = logging.getLogger(__name__)

PN532_RATE = 115200  # the chip's rate at power-on, and the one we keep
STRAY_RATES = (921600, 460800, 230400)  # where nfcpy (or other software) may have left a chip
PREAMBLE = bytes(10)  # wakes a chip from power-down on its serial line (HSU)
GET_FIRMWARE_VERSION = bytes.fromhex("0000ff02fed4022a00")
FIRMWARE_VERSION_REPLY = bytes.fromhex("0000ff06fad50332")  # IC 0x32: a PN532
ACK = bytes(nfc.clf.pn53x.Chipset.ACK)
SHORT_SERIAL = re.compile(r"^(S|ACM|AMA|USB)(\d*)$")


class SerialLine(nfc.clf.transport.TTY):  # type: ignore[misc]  # nfcpy has no type hints
    """nfcpy's serial transport, opened with an exclusive lock (pyserial opens with O_NOCTTY), and
    closed without raising when the tty has hung up.

    It waits at least `patience` ms for a frame: nfcpy waits 100 ms for the chip's ACK (the chip
    needs 15), and a busy Pi (or a Pi's ttyUSB, which nfcpy itself gives 1.5 s for its first
    answer) misses that now and then; the command then fails and its late answer is taken for the
    next one's. A chip that answers is never slowed down by this."""

    patience = 1000

    def open(self, port: str, baudrate: int = PN532_RATE) -> None:
        self.close()
        self.tty = serial.Serial(port, baudrate, timeout=0.05, exclusive=True)

    def read(self, timeout: int) -> Any:
        return super().read(max(timeout, self.patience))

    def close(self) -> None:
        line, self.tty = self.tty, None
        if line is None:
            return
        try:
            line.flushOutput()
        except Exception as error:  # termios.error after a hangup
            log.debug("flushing %s: %s", line.port, error)
        finally:
            try:
                line.close()
            except Exception as error:
                log.debug("closing %s: %s", line.port, error)


def serial_ports(port: str) -> list[str]:
    """The device files a `tty:` path's port names: a file path as given (/dev/serial/by-id/... keeps
    its name across replugs), `USB0` as /dev/ttyUSB0, `USB` as every /dev/ttyUSB* in order."""
    if "/" in port:
        return [port]
    short = SHORT_SERIAL.match(port)
    if short and not short.group(2):
        found = glob.glob(f"/dev/tty{port}[0-9]*")
        return sorted(found, key=lambda name: (len(name), name))
    return [f"/dev/tty{port}" if short else f"/dev/{port}"]


def _hello(line: SerialLine, patience: int = SerialLine.patience) -> bool:
    """Wake the chip and ask its firmware version at the line's current rate."""
    line.patience = patience
    line.write(PREAMBLE + GET_FIRMWARE_VERSION)
    try:
        return bool(
            line.read(timeout=100) == ACK and line.read(timeout=100).startswith(FIRMWARE_VERSION_REPLY)
        )
    except OSError:  # ETIMEDOUT: nothing (intelligible) came back
        return False
    finally:
        line.patience = SerialLine.patience


def _set_rate(line: SerialLine, port: str, rate: int) -> None:
    """Tell a chip answering at the line's rate to switch to `rate`, and follow it."""
    index = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600).index(rate)
    data = bytes([0xD4, 0x10, index])
    line.write(bytes.fromhex("0000ff03fd") + data + bytes([(-sum(data)) & 0xFF, 0]))
    line.read(timeout=100)  # ACK
    line.read(timeout=100)  # the answer, still at the old rate
    line.write(ACK)
    time.sleep(0.002)
    line.open(port, rate)


def find_pn532_rate(line: SerialLine, port: str) -> int | None:
    """Find the chip at 115200 or at a rate it was left at, and bring it back to 115200; the rate
    it was found at, or None if nothing answers."""
    for rate in (PN532_RATE, *STRAY_RATES):
        line.open(port, rate)
        if _hello(line, SerialLine.patience if rate == PN532_RATE else 100):
            if rate != PN532_RATE:
                log.warning("the PN532 on %s answered at %d baud (left there by an unclean exit)", port, rate)
                _set_rate(line, port, PN532_RATE)
                if not _hello(line):
                    return None
            return rate
    return None


def open_serial_pn532(port: str) -> Any:
    """nfcpy's PN532 driver on the serial port `port`, at 115200 baud; raises OSError if no chip
    answers (ENODEV) or the port is taken (EBUSY)."""
    line = SerialLine()
    try:
        try:
            line.open(port)
        except serial.SerialException as error:
            if "lock" in str(error):
                raise OSError(errno.EBUSY, f"{port} is in use by another process") from error
            raise OSError(errno.ENODEV, str(error)) from error
        if find_pn532_rate(line, port) is None:
            raise OSError(errno.ENODEV, f"no PN532 answers on {port}")
        chipset = nfc.clf.pn532.Chipset(line, logger=nfc.clf.pn532.log)
        chipset.sam_configuration("normal")
        device = nfc.clf.pn532.Device(chipset, logger=nfc.clf.pn532.log)
    except BaseException:
        line.close()
        raise
    device._path = port
    return device


class Acr122Device(nfc.clf.acr122.Device):  # type: ignore[misc]
    """nfcpy's ACR122U driver, closed without sending the chip PowerDown: after it many ACR122Us do
    not answer again until replugged (nfcpy #231). The reader stays powered, its field off."""

    def close(self) -> None:
        try:
            self.mute()  # the RF field off, as a power-down would leave it
        finally:
            nfc.clf.pn53x.Device.close(self)  # LEDs back to default, USB interface released


def adopt(device: Any) -> Any:
    """The driver nfcpy picked, with our fixes for its model."""
    if type(device) is nfc.clf.acr122.Device:
        device.__class__ = Acr122Device
    return device


def open_frontend(path: str) -> Any:
    """An open `nfc.ContactlessFrontend` at `path`, or None if no reader is there. Raises OSError
    for a fully given path that exists but cannot be used (busy, permission)."""
    clf = nfc.ContactlessFrontend()
    scheme, _, rest = path.partition(":")
    port, _, driver = rest.rpartition(":")
    if scheme == "tty" and driver == "pn532" and port:
        error: OSError | None = None
        for candidate in serial_ports(port):
            try:
                clf.device = open_serial_pn532(candidate)
                return clf
            except OSError as failed:
                error = failed
        if error is not None and error.errno == errno.EBUSY:
            raise error
        return None
    if not clf.open(path):
        return None
    clf.device = adopt(clf.device)
    return clf


def close_frontend(clf: Any) -> None:
    """Close a reader, even one that is gone; its port is released in every case."""
    if clf is None:
        return
    device, clf.device = clf.device, None
    if device is None:
        return
    try:
        device.close()
    except Exception as error:  # a reader unplugged: its last commands cannot be sent
        log.debug("closing the reader: %s", error)
        transport = getattr(getattr(device, "chipset", None), "transport", None)
        if transport is not None:
            transport.close()
