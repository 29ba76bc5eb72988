"""A file system that loses what was not synced, for power-cut tests (issue 26), after Jepsen's LazyFS.

It is a FUSE loopback over a folder (the page cache: every write lands there at once, so programs
see their own writes), beside which it keeps what a disk would still hold after a power cut:

- a file's content as it was at its last `fsync`/`fdatasync` (per inode; never synced: empty);
- a folder's names as they were at the folder's own last `fsync` (a file created or renamed is
  durable under its new name only then; before, the old name and the old file are what survive).

`cut` is the power cut: the folder is rebuilt from that durable state and mounted again, so every
write that was never synced is gone. What the kernel does with locks (SQLite's fcntl locks) and a
shared mmap (SQLite's `-shm`) is the kernel's own: this file system leaves `lock` to it, and `-shm`
holds nothing SQLite needs after a restart. It can also fail on command, as a dying SD card does:
the next `fsync` or `write` of a file whose name holds a word answers EIO (or the one after
`skip` such calls went through: a failure half-way through a transaction).

Run as a program, it is driven over its standard input, one command a line, and answers each on
its standard output (`ready` once mounted):

    python tests/lazyfs.py CACHE MOUNTPOINT
    cut                    -> ready     (a power cut: drop everything unsynced, mount again)
    fail fsync|write WORD [SKIP]  -> ok  (the next such call on a file named with WORD, after SKIP
                                          of them went through, fails: EIO)
    exit                   -> (unmount and stop)

Used by tests/table/test_power_cut.py and bench/power_cuts.py.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from mfusepy import FUSE, FuseOSError, Operations


class Durable:
    """What a disk holds for sure: file contents by inode, folder listings by inode."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.contents: dict[int, bytes] = {}
        self.listings: dict[int, dict[str, int]] = {}
        self.folders: set[int] = set()
        self.snapshot()

    def snapshot(self) -> None:
        """Everything in the folder now is on the disk (at mount: it was rebuilt from the disk)."""
        self.contents, self.listings, self.folders = {}, {}, set()
        for folder, names, files in os.walk(self.root):
            ino = os.stat(folder).st_ino
            self.folders.add(ino)
            self.listings[ino] = {}
            for name in names + files:
                self.listings[ino][name] = os.lstat(os.path.join(folder, name)).st_ino
            for name in files:
                path = os.path.join(folder, name)
                self.contents[os.lstat(path).st_ino] = Path(path).read_bytes()

    def file_synced(self, path: str) -> None:
        self.contents[os.stat(path).st_ino] = Path(path).read_bytes()

    def folder_synced(self, path: str) -> None:
        ino = os.stat(path).st_ino
        self.listings[ino] = {name: os.lstat(os.path.join(path, name)).st_ino for name in os.listdir(path)}
        self.folders.update(
            entry for name, entry in self.listings[ino].items() if os.path.isdir(os.path.join(path, name))
        )

    def rebuild(self) -> None:
        """The power cut: the folder holds what the disk held, nothing more."""
        root_ino = os.stat(self.root).st_ino
        staged = self.root.with_name(self.root.name + ".rebuilt")
        shutil.rmtree(staged, ignore_errors=True)
        self._write(root_ino, staged, set())
        shutil.rmtree(self.root)
        staged.rename(self.root)
        self.snapshot()

    def _write(self, ino: int, folder: Path, seen: set[int]) -> None:
        folder.mkdir()
        seen.add(ino)
        for name, entry in self.listings.get(ino, {}).items():
            if entry in self.folders:
                if entry not in seen:
                    self._write(entry, folder / name, seen)
            else:
                (folder / name).write_bytes(self.contents.get(entry, b""))


class LazyFS(Operations):  # type: ignore[misc]
    """A loopback over `root` that tells `durable` about every fsync, and fails when told to."""

    use_ns = True

    def __init__(self, root: Path, durable: Durable) -> None:
        self.root = str(root)
        self.durable = durable
        self.failing: dict[str, tuple[str, int]] = {}  # "fsync" | "write" -> (a word of the name, skip)
        self._mutex = threading.Lock()  # not `lock`: that name is a FUSE operation

    def _real(self, path: str) -> str:
        return self.root + path

    def _fail(self, call: str, path: str) -> None:
        with self._mutex:
            word, skip = self.failing.get(call, ("", 0))
            if word and word in os.path.basename(path):
                if skip:
                    self.failing[call] = (word, skip - 1)
                    return
                del self.failing[call]
                raise FuseOSError(errno.EIO)

    # Names
    def getattr(self, path: str, fh: Any = None) -> dict[str, Any]:
        st = os.lstat(self._real(path))
        keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime", "st_mtime", "st_ctime")
        found = {key: getattr(st, key) for key in keys}
        found.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
        return found

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._real(path))]

    def access(self, path: str, amode: int) -> int:
        if not os.access(self._real(path), amode):
            raise FuseOSError(errno.EACCES)
        return 0

    def mkdir(self, path: str, mode: int) -> int:
        os.mkdir(self._real(path), mode)
        return 0

    def rmdir(self, path: str) -> int:
        os.rmdir(self._real(path))
        return 0

    def unlink(self, path: str) -> int:
        os.unlink(self._real(path))
        return 0

    def rename(self, old: str, new: str) -> int:
        os.rename(self._real(old), self._real(new))
        return 0

    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._real(path), mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        os.chown(self._real(path), uid, gid)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        os.utime(self._real(path), ns=times)
        return 0

    def statfs(self, path: str) -> dict[str, Any]:
        st = os.statvfs(self._real(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag")
        return {key: getattr(st, key) for key in (*keys, "f_frsize", "f_namemax")}

    # Files
    def open(self, path: str, flags: int) -> int:
        return os.open(self._real(path), flags)

    def create(self, path: str, mode: int, fi: Any = None) -> int:
        return os.open(self._real(path), os.O_RDWR | os.O_CREAT, mode)  # the kernel checked O_EXCL

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        self._fail("write", path)
        return os.pwrite(fh, data, offset)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._real(path), length)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0  # close() is no sync: what it wrote is in the page cache only

    def release(self, path: str, fh: int) -> int:
        os.close(fh)
        return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        self._fail("fsync", path)
        with self._mutex:
            self.durable.file_synced(self._real(path))
        return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        self._fail("fsync", path)
        with self._mutex:
            self.durable.folder_synced(self._real(path))
        return 0


def serve(cache: Path, mountpoint: Path) -> None:
    """Mount, answer commands, and mount again after each cut, until `exit` or the end of input."""
    durable = Durable(cache)
    while True:
        fs = LazyFS(cache, durable)
        stop = threading.Event()
        commands = threading.Thread(target=_commands, args=(fs, mountpoint, stop), daemon=True)
        commands.start()
        FUSE(fs, str(mountpoint), foreground=True, nothreads=True, attr_timeout=0, entry_timeout=0)
        commands.join()
        if stop.is_set():
            return
        durable.rebuild()


def _commands(fs: LazyFS, mountpoint: Path, stop: threading.Event) -> None:
    _wait_mounted(mountpoint)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words[:1] == ["fail"] and len(words) in (3, 4):
            with fs._mutex:
                fs.failing[words[1]] = (words[2], int(words[3]) if len(words) == 4 else 0)
            print("ok", flush=True)
            continue
        if words == ["exit"]:
            stop.set()
        _unmount(mountpoint)  # `cut` (and anything unknown: better a cut than a hang)
        return
    stop.set()
    _unmount(mountpoint)


def _wait_mounted(mountpoint: Path) -> None:
    while not os.path.ismount(mountpoint):
        threading.Event().wait(0.01)


def _unmount(mountpoint: Path) -> None:
    with contextlib.suppress(subprocess.CalledProcessError):
        subprocess.run(["fusermount3", "-u", "-z", str(mountpoint)], check=True, capture_output=True)


if __name__ == "__main__":
    serve(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())
