"""An NFC tag for the tests, emulated by nfcpy in a process of its own.

The child process runs nfcpy's UDP driver in listen mode (`nfc.clf.LocalTarget("212F")`,
`clf.listen`, `nfc.tag.emulate`, `tag.add_service`): a Type 3 Tag with an NDEF data area, exactly
as `examples/tagtool.py emulate tt3` builds one. The reader under test opens `udp:127.0.0.1:PORT`
and polls it with a real `ContactlessFrontend`.

How the two sides pair: the emulator binds UDP `PORT` while it listens; the reader sends its polls
(SENSF_REQ) to that port from a fresh ephemeral socket each poll and waits 1 s for an answer. So a
tag is "on the reader" while the emulator listens and answers, and "lifted" once it closes its
socket: the reader's presence check then gets no answer.

    with TagEmulator(port) as emulator:
        emulator.present(uid, text="spy-team/red-1")   # the card is put on the reader
        ...
        emulator.lift()                                 # and taken off
"""

from __future__ import annotations

import multiprocessing
import struct
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

PMM = bytes.fromhex("01E0000000FFFF00")  # tagtool's default: generous response times
NFC_FORUM_SYSTEM = bytes.fromhex("12FC")  # the system code of an NDEF Type 3 Tag
LISTEN_WINDOW = 0.7  # seconds; see _serve


def uid(number: int) -> str:
    """A distinct 8-byte IDm for test tag `number` (not 01FE...: nfcpy takes that for a P2P device)."""
    return f"03fe{number:012x}"


@dataclass(frozen=True)
class TagSpec:
    """What the emulated tag carries: `text` as an NDEF text record (None: an empty NDEF message),
    or no NDEF at all (`ndef=False`: a tag that is not NDEF formatted, known by its UID only)."""

    uid: str
    text: str | None = None
    ndef: bool = True
    writable: bool = True
    size: int = 64  # bytes of NDEF data area


def tt3_memory(spec: TagSpec) -> bytearray:
    """The tag's blocks: the attribute block (NDEF mapping version, sizes, read/write flag, length,
    checksum) followed by the NDEF data area."""
    import ndef

    data = b"".join(ndef.message_encoder([ndef.TextRecord(spec.text, "en")])) if spec.text else b""
    area = bytearray(data) + bytearray(max(spec.size, -(-len(data) // 16) * 16) - len(data))
    attributes = bytearray(16)
    attributes[0] = 0x10  # mapping version 1.0
    attributes[1] = 4  # blocks per read
    attributes[2] = 1  # blocks per write
    attributes[3:5] = struct.pack(">H", len(area) // 16)
    attributes[10:14] = struct.pack(">I", len(data))
    attributes[10] = 1 if spec.writable else 0  # RWFlag (shares the byte above the 24-bit length)
    attributes[14:16] = struct.pack(">H", sum(attributes[:14]))
    return attributes + area


def ndef_text(memory: bytes) -> str | None:
    """The text record in a tag memory, as an NDEF reader would see it."""
    import ndef

    length = int.from_bytes(memory[11:14], "big")
    for record in ndef.message_decoder(bytes(memory[16 : 16 + length]), errors="relax"):
        if isinstance(record, ndef.TextRecord):
            return str(record.text)
    return None


# The child process


# Over the complexity cap: one command loop of the emulated tag, being reworked by "nfcfix" (issue 16).
def _serve(port: int, conn: Connection) -> None:  # noqa: C901
    import nfc
    import nfc.clf
    import nfc.tag

    clf: Any = None
    spec: TagSpec | None = None
    memory = bytearray()
    activations: list[tuple[str, float]] = []  # (uid, time.monotonic()) each time a reader took the tag

    def close() -> None:
        nonlocal clf
        if clf is not None:
            clf.close()  # unbinds the port: the reader's polls now go unanswered
            clf = None

    def handle(command: tuple[Any, ...]) -> None:
        """Apply one command from the test."""
        nonlocal spec, memory
        name = command[0]
        if name == "present":
            close()
            spec = command[1]
            memory = tt3_memory(spec)
            conn.send(("ok", time.monotonic()))
        elif name == "lift":
            close()
            spec = None
            conn.send(("ok", time.monotonic()))
        elif name == "memory":
            conn.send(("ok", bytes(memory)))
        elif name == "activations":
            conn.send(("ok", list(activations)))

    def read_block(number: int, rb: bool, re: bool) -> bytes | None:
        if number < len(memory) // 16:
            return bytes(memory[number * 16 : (number + 1) * 16])
        return None

    def write_block(number: int, data: bytes, wb: bool, we: bool) -> bool:
        if spec is not None and spec.writable and number < len(memory) // 16:
            memory[number * 16 : (number + 1) * 16] = data
            return True
        return False

    conn.send(("ready", None))
    while True:
        if conn.poll(0 if spec is not None else 0.05):
            handle(conn.recv())
        if spec is None:
            continue
        if clf is None:
            clf = nfc.ContactlessFrontend(f"udp:127.0.0.1:{port}")
        target = nfc.clf.LocalTarget("212F")
        target.sensf_res = b"\x01" + bytes.fromhex(spec.uid) + PMM + NFC_FORUM_SYSTEM
        # Listen windows must not be whole seconds: the reader polls once a second, and a poll that
        # arrives as a window closes is answered but its follow-up command lands in the next window
        # (a fresh socket), so the tag is found but cannot be read. Commands wait for the window.
        activated = clf.listen(target, LISTEN_WINDOW)
        if activated is None:
            continue
        activations.append((spec.uid, time.monotonic()))
        tag = nfc.tag.emulate(clf, activated)
        if spec.ndef:
            tag.add_service(0x0009, read_block, write_block)  # NDEF read/write service
            tag.add_service(0x000B, read_block, None)  # NDEF read-only service
        reply = tag.process_command(tag.cmd)
        silence = 0.0
        while clf is not None:
            if conn.poll():
                handle(conn.recv())
            if clf is None:  # lifted (or replaced by another tag)
                break
            try:
                command = clf.exchange(reply, 0.05)
            except nfc.clf.BrokenLinkError:  # the reader switched its field off (RFOFF)
                break
            except nfc.clf.TimeoutError:
                reply, silence = None, silence + 0.05
                if silence > 2.0:  # the reader went away without a word
                    break
                continue
            except nfc.clf.CommunicationError:
                reply = None
                continue
            reply, silence = tag.process_command(command), 0.0


# The test side


class TagEmulator:
    """Controls one emulated tag (in a child process) on `udp:127.0.0.1:port`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.path = f"udp:127.0.0.1:{port}"
        context = multiprocessing.get_context("spawn")  # no fork of a test process full of threads
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(port, child), daemon=True)
        self._process.start()
        child.close()
        self._expect("ready", timeout=30)

    def present(self, spec: TagSpec | str, text: str | None = None, **options: Any) -> float:
        """Put a tag on the reader; returns the time (monotonic) it started answering."""
        if isinstance(spec, str):
            spec = TagSpec(spec, text, **options)
        return float(self._call("present", spec))

    def lift(self) -> float:
        """Take the tag off the reader (it stops answering at once)."""
        return float(self._call("lift"))

    def memory(self) -> bytes:
        return bytes(self._call("memory"))

    def text(self) -> str | None:
        """The NDEF text record on the tag now (after a write, the written one)."""
        return ndef_text(self.memory())

    def activations(self) -> list[tuple[str, float]]:
        """Each time a reader activated the tag: (uid, time.monotonic())."""
        return [(u, float(t)) for u, t in self._call("activations")]

    def close(self) -> None:
        # Terminated rather than asked: a listening emulator would finish its 1 s window first.
        self._process.terminate()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._conn.close()

    def __enter__(self) -> TagEmulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, *command: Any, timeout: float = 10) -> Any:
        self._conn.send(command)
        return self._expect("ok", timeout)

    def _expect(self, kind: str, timeout: float) -> Any:
        if not self._conn.poll(timeout):
            raise TimeoutError(f"the tag emulator did not answer within {timeout} s")
        got, value = self._conn.recv()
        assert got == kind, (got, value)
        return value
