"""The test side of tests/lazyfs.py: mount it in a process of its own, cut the power, make it fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import TracebackType

PROGRAM = Path(__file__).with_name("lazyfs.py")


def why_not_mountable() -> str | None:
    """None where a FUSE file system can be mounted here, else why not (for a skip)."""
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is missing (Debian's fuse3)"
    try:
        import mfusepy  # noqa: F401 - loads libfuse3 through ctypes
    except (ImportError, OSError) as error:
        return f"mfusepy cannot load libfuse: {error}"
    return None


class LazyMount:
    """`mountpoint` backed by `cache`, losing what is not synced at each `cut()`."""

    def __init__(self, folder: Path) -> None:
        self.cache = folder / "cache"
        self.mountpoint = folder / "disk"
        self.cache.mkdir(parents=True, exist_ok=True)
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [sys.executable, str(PROGRAM), str(self.cache), str(self.mountpoint)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._expect("ready")

    def _send(self, line: str, answer: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        self._expect(answer)

    def _expect(self, answer: str) -> None:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()  # the file system answers when it is done
        if line != answer:
            self.process.kill()
            raise RuntimeError(f"lazyfs said {line!r}, not {answer!r} (exit status {self.process.poll()})")

    def cut(self) -> None:
        """The power cut: everything written and not synced is gone; mounted again, as after a boot.
        Whatever wrote to it must be stopped first (SIGKILL: the daemon has no say in a cut)."""
        self._send("cut", "ready")

    def fail(self, call: str, word: str, skip: int = 0) -> None:
        """The next `call` ("fsync" or "write") on a file whose name holds `word` answers EIO, or
        the one after `skip` such calls went through."""
        self._send(f"fail {call} {word} {skip}", "ok")

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("exit\n")
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        subprocess.run(["fusermount3", "-u", "-z", str(self.mountpoint)], capture_output=True)

    def __enter__(self) -> LazyMount:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
