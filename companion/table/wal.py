"""Reads a SQLite write-ahead log the way SQLite's recovery does, to tell whether a write was torn.

After a crash or a power cut the journal's `-wal` file still holds the transactions that were not
yet copied into the database. When SQLite next opens it, it replays the frames up to the last whole
transaction (a commit frame whose salts and running checksum are right) and silently drops the rest.
That is what makes a torn last write harmless, but silent: this module looks first, so the journal
can log and record the recovery and `companion doctor` can report it.

File format (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte header (magic, version,
page size, checkpoint sequence, two salts, checksum), then frames of a 24-byte header (page number,
database size after commit or 0, the two salts, running checksum) and one page each.

What counts as torn: a file that ends inside a frame, or frames of the current WAL generation (their
salts match the header) after the last whole transaction. What it cannot tell: a write torn so early
that not even its frame header reached the disk; SQLite drops it all the same.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

HEADER = 32
FRAME_HEADER = 24
# The magic's low bit gives the byte order of the checksum words: 0x...82 little, 0x...83 big.
MAGIC_ORDER = {0x377F0682: "<", 0x377F0683: ">"}


@dataclass(frozen=True)
class WalReport:
    """What SQLite will make of a `-wal` file."""

    path: str
    size: int  # bytes in the file
    committed_frames: int  # frames SQLite replays: every whole transaction
    end: int  # offset where the last whole transaction ends
    discarded: int  # bytes of a torn or unfinished write after `end` (0: none)

    @property
    def torn(self) -> bool:
        return self.discarded > 0

    def describe(self) -> str:
        if self.torn:
            return (
                f"the last write was cut off: {self.discarded} bytes of an unfinished transaction at the "
                f"end of {Path(self.path).name} are discarded; every whole entry before it is kept"
            )
        return f"{self.committed_frames} frames of whole transactions, nothing torn"


def inspect_wal(db_path: str | Path) -> WalReport | None:
    """Look at `<db>-wal` without changing it; None if there is no WAL file (a clean stop)."""
    path = Path(f"{db_path}-wal")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    size = len(data)
    if size == 0:
        return WalReport(str(path), 0, 0, 0, 0)
    if size < HEADER:
        return WalReport(str(path), size, 0, 0, size)  # even the header was cut off
    header = _header(data)
    if header is None:  # SQLite ignores a WAL whose header is not whole: nothing of it is replayed.
        return WalReport(str(path), size, 0, 0, size)
    order, page_size, salts, checks = header
    frame = FRAME_HEADER + page_size
    committed, end = _last_commit(data, order, frame, salts, checks)
    return WalReport(str(path), size, committed, end, _torn_bytes(data, end, frame, *salts))


def _header(data: bytes) -> tuple[str, int, tuple[int, int], tuple[int, int]] | None:
    """The WAL header's byte order, page size, salts and checksum; None if it is not whole."""
    magic, _version, page_size, _seq, salt1, salt2, check1, check2 = struct.unpack(">8I", data[:HEADER])
    order = MAGIC_ORDER.get(magic)
    valid_page = 512 <= page_size <= 65536 and page_size & (page_size - 1) == 0
    if order is None or not valid_page or checksum(data[:24], order, 0, 0) != (check1, check2):
        return None
    return order, page_size, (salt1, salt2), (check1, check2)


def _last_commit(
    data: bytes, order: str, frame: int, salts: tuple[int, int], checks: tuple[int, int]
) -> tuple[int, int]:
    """Walk the frames while each one's salts and running checksum hold: the number of frames up to
    the last commit frame, and where that commit ends."""
    s0, s1 = checks
    offset = end = HEADER
    frames = committed = 0
    while offset + frame <= len(data):
        page_no, commit, f_salt1, f_salt2, f_check1, f_check2 = struct.unpack(
            ">6I", data[offset : offset + FRAME_HEADER]
        )
        if page_no == 0 or (f_salt1, f_salt2) != salts:
            break
        s0, s1 = checksum(data[offset : offset + 8], order, s0, s1)
        s0, s1 = checksum(data[offset + FRAME_HEADER : offset + frame], order, s0, s1)
        if (s0, s1) != (f_check1, f_check2):
            break
        frames += 1
        offset += frame
        if commit:
            end, committed = offset, frames
    return committed, end


def _torn_bytes(data: bytes, end: int, frame: int, salt1: int, salt2: int) -> int:
    """Bytes after the last whole transaction that belong to a write that did not finish."""
    size = len(data)
    if (size - HEADER) % frame:
        return size - end  # the file ends inside a frame: the write was cut off at the end
    torn = 0
    offset = end
    # Whole frames after it are either this generation's (a transaction cut off before its commit
    # frame, or a frame whose checksum is wrong) or leftovers of an older generation, which are
    # normal: SQLite reuses the file from the start after a checkpoint and never truncates it.
    while offset + frame <= size:
        _page, _commit, f_salt1, f_salt2 = struct.unpack(">4I", data[offset : offset + 16])
        blank = not any(data[offset : offset + FRAME_HEADER])
        if (f_salt1, f_salt2) != (salt1, salt2) and not blank:
            break
        torn += frame
        offset += frame
    return torn


def checksum(data: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    """SQLite's running WAL checksum over `data` (a multiple of 8 bytes), continued from (s0, s1)."""
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1
