"""A contactless NTAG213 for a real `pcscd`, through vsmartcard's virtual reader (`vpcd`).

Debian's `vsmartcard-vpcd` is a pcscd reader driver that listens on a TCP port for a "virtual card".
`VirtualNtag.place(port)` connects to it: for pcscd (and so for pyscard and the companion) a card is
now in the reader; `lift()` closes the connection and the card is gone. vpcd's protocol: every
message is a 2-byte big-endian length and a payload; a 1-byte payload from vpcd is a control code
(0 power off, 1 power on, 2 reset, 4 "send your ATR"), anything longer a command APDU, answered with
the response APDU. The card answers what a PC/SC contactless reader answers for an NTAG213 (PC/SC
part 3): `FF CA 00 00 00` its UID, `FF B0 00 pp 10` 16 bytes from page pp, `FF D6 00 pp 04 ....`
writes page pp. Only the wire is emulated: pcscd, the vpcd driver and pyscard run for real.

`Pcscd` starts a private pcscd for a test session with the vpcd driver on a free port: in a mount
namespace of its own whose /run/pcscd is a temporary folder (pcscd's socket path is fixed at build
time), so it never meets a system pcscd; clients find it through `PCSCLITE_CSOCK_NAME`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

VPCD_DRIVER = Path("/usr/lib/pcsc/drivers/serial/libifdvpcd.so")
# PC/SC part 3's ATR for a contactless storage card: standard 14443-3A, card name 0x0003
# (MIFARE Ultralight, which NTAG21x answers as).
NTAG_ATR = bytes.fromhex("3B8F8001804F0CA0000003060300030000000068")
POWER_OFF, POWER_ON, RESET, GET_ATR = 0, 1, 2, 4
VPCD_POLL = 0.4  # seconds between pcscd's questions to vpcd whether a card is there
OK = b"\x90\x00"


def ntag213(uid: bytes, *, read_only: bool = False) -> bytearray:
    """The memory of a blank NTAG213 as sold: 45 pages, CC E1 10 12 00, an empty NDEF TLV."""
    pages = bytearray(45 * 4)
    pages[0:3] = uid[0:3]
    pages[4:8] = uid[3:7]
    pages[12:16] = bytes([0xE1, 0x10, 0x12, 0x0F if read_only else 0x00])
    pages[16:19] = bytes([0x03, 0x00, 0xFE])
    return pages


class VirtualNtag:
    """One tag: its memory survives being lifted and placed again."""

    def __init__(self, uid: str, memory: bytearray | None = None, *, read_only: bool = False) -> None:
        self.uid = bytes.fromhex(uid)
        self.memory = memory if memory is not None else ntag213(self.uid, read_only=read_only)
        self.read_only = read_only
        self.apdus: list[bytes] = []
        self.apdu_bytes = 0  # bytes of the command and response APDUs, both ways
        self._sock: socket.socket | None = None
        self._port = 0
        self._thread: threading.Thread | None = None

    def place(self, port: int, timeout: float = 10.0) -> None:
        """Put the tag on vpcd's reader at `port` (retrying while vpcd is not listening yet)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=1.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        sock.settimeout(None)
        self._sock, self._port = sock, port
        self._thread = threading.Thread(target=self._serve, args=(sock,), daemon=True)
        self._thread.start()

    def lift(self) -> None:
        """Take the tag off, and give pcscd the time to see the reader empty: vpcd is a polled
        driver (pcscd asks it every 0.4 s whether a card is there), and a card put on before pcscd
        has seen the reader empty is never served by vpcd (pcscd goes on seeing no card). A real
        reader reports each removal and insertion by itself; in the tests a lifted card's place
        stays empty for half a second, as a hand takes longer anyway."""
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            time.sleep(VPCD_POLL + 0.1)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def on_reader(self) -> bool:
        return self._sock is not None

    def _serve(self, sock: socket.socket) -> None:
        try:
            while True:
                head = _recv(sock, 2)
                if head is None:
                    return
                (size,) = struct.unpack(">H", head)
                message = _recv(sock, size)
                if message is None:
                    return
                answer = self._answer(message)
                if answer is not None:
                    sock.sendall(struct.pack(">H", len(answer)) + answer)
        except OSError:
            return

    def _answer(self, message: bytes) -> bytes | None:
        if len(message) == 1:
            return NTAG_ATR if message[0] == GET_ATR else None
        self.apdus.append(message)
        answer = self.apdu(message)
        self.apdu_bytes += len(message) + len(answer)
        return answer

    def apdu(self, apdu: bytes) -> bytes:
        if apdu == bytes.fromhex("FFCA000000"):
            return self.uid + OK
        if len(apdu) == 5 and apdu[:3] == b"\xff\xb0\x00":
            page, size = apdu[3], apdu[4]
            if page * 4 >= len(self.memory):
                return b"\x6a\x82"
            data = (self.memory + self.memory)[page * 4 : page * 4 + size]  # NTAG reads roll over
            return data + OK
        if len(apdu) == 9 and apdu[:3] == b"\xff\xd6\x00" and apdu[4] == 4:
            page = apdu[3]
            if self.read_only or page < 4 or page >= 40:
                return b"\x63\x00"
            self.memory[page * 4 : page * 4 + 4] = apdu[5:9]
            return OK
        return b"\x6d\x00"  # instruction not supported


def _recv(sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pcscd_missing() -> str | None:
    """Why a real pcscd with vpcd cannot run here, or None."""
    if shutil.which("pcscd") is None and not Path("/usr/sbin/pcscd").exists():
        return "pcscd is not installed (apt-get install pcscd)"
    if not VPCD_DRIVER.exists():
        return "vsmartcard-vpcd is not installed (apt-get install vsmartcard-vpcd)"
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return "a private pcscd needs root and unshare (a mount namespace for its socket)"
    try:
        import smartcard  # noqa: F401
    except ImportError:
        return "pyscard is not installed (pip install '.[pcsc]')"
    return None


class Pcscd:
    """A private pcscd with one vpcd reader ("Virtual PCD 00 00" on `port`, "... 00 01" on port+1)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="companion-pcscd-"))
        self.port = free_port()
        # Where the clients look for it (tests/conftest.py sets it for the whole test session).
        self.socket = Path(os.environ.get("PCSCLITE_CSOCK_NAME") or self.dir / "run" / "pcscd.comm")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """What a client process needs to find this pcscd."""
        return {"PCSCLITE_CSOCK_NAME": str(self.socket)}

    def start(self) -> None:
        conf = self.dir / "reader.conf.d"
        conf.mkdir(exist_ok=True)
        self.socket.parent.mkdir(parents=True, exist_ok=True)
        (conf / "vpcd").write_text(
            f'FRIENDLYNAME "Virtual PCD"\nDEVICENAME /dev/null:0x{self.port:04X}\n'
            f"LIBPATH {VPCD_DRIVER}\nCHANNELID 0x{self.port:04X}\n"
        )
        pcscd = shutil.which("pcscd") or "/usr/sbin/pcscd"
        script = f"mount --bind {self.socket.parent} /run/pcscd && exec {pcscd} --foreground -c {conf}"
        Path("/run/pcscd").mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
            stdout=open(self.dir / "pcscd.log", "ab"),  # noqa: SIM115 - the child keeps it
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 10
        while not (self.socket.exists() and _listening(self.port)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"pcscd did not start: {(self.dir / 'pcscd.log').read_text()}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        self.socket.unlink(missing_ok=True)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.socket.parent.rmdir()


def _tcp_states(port: int) -> list[str]:
    """The states (hex, as /proc/net/tcp shows them) of the sockets whose local port is `port`."""
    try:
        lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return []
    return [line.split()[3] for line in lines if line.split()[1].endswith(f":{port:04X}")]


def _listening(port: int) -> bool:
    """vpcd listens on `port` (read from /proc: a test connection would be taken for a card)."""
    return "0A" in _tcp_states(port)
