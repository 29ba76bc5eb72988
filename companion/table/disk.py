"""What the disk and the service's sandbox allow: syncing a folder so a new name survives a power cut,
making folders that way, telling a read-only file system, and telling the sandbox's read-only paths
from a read-only disk. Used by the journal, the card registry and `companion doctor`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def sync_directory(folder: Path) -> None:
    """fsync a folder, so a file just created in it is still there after a power cut."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_folder(folder: Path) -> None:
    """Create a folder (and its parents), each one synced into its own parent."""
    missing = [parent for parent in (folder, *folder.parents) if not parent.exists()]
    for new in reversed(missing):
        new.mkdir()
        sync_directory(new.parent)


def nearest_existing(path: Path | str) -> Path:
    """`path`, or its nearest ancestor that exists (where a file not made yet would go)."""
    found = Path(path).resolve()
    while not found.exists() and found != found.parent:
        found = found.parent
    return found


def read_only_fs(path: Path | str) -> bool:
    """Whether the filesystem that holds (or would hold) `path` is mounted read-only."""
    return bool(os.statvfs(nearest_existing(path)).f_flag & os.ST_RDONLY)


def sandbox_write_hint(path: str | Path, env: Mapping[str, str] | None = None) -> str | None:
    """Why `path` is read-only for the service, and the drop-in that fixes it; None outside systemd
    or inside the state directory. The unit's ProtectSystem=strict leaves only its StateDirectory
    (and any ReadWritePaths=) writable: a `[journal] path` elsewhere looks like a read-only disk
    from inside, while `companion doctor`, run outside the sandbox, finds the disk fine."""
    env = os.environ if env is None else env
    state = env.get("STATE_DIRECTORY")
    if not env.get("INVOCATION_ID") or not state:
        return None
    folder = Path(path).absolute().parent
    if any(folder.is_relative_to(Path(allowed)) for allowed in state.split(":")):
        return None
    return (
        f"{folder} is outside the service's state directory {state}, and the unit's "
        f"ProtectSystem=strict makes it read-only for the service: run `sudo systemctl edit companion` "
        f"and add the two lines [Service] and ReadWritePaths={folder}, or move the file under {state}"
    )
