"""Power cuts for real (issue 26): `companion run`, unmodified, on a file system that drops every
write not yet synced when the power is cut (tests/lazyfs.py). A kill -9 alone cannot show a missing
fsync: the kernel's page cache survives it; a power cut does not.

First, the file system itself: a write without fsync is gone after a cut, with fsync it stays, and a
new name lasts only once its folder is synced, so these tests cannot pass by losing nothing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from companion.table.disk import sync_directory
from tests import power_cuts
from tests.lazymount import LazyMount, why_not_mountable
from tests.mosquitto import MOSQUITTO

pytestmark = pytest.mark.skipif(why_not_mountable() is not None, reason=str(why_not_mountable()))


@pytest.fixture
def lazy(tmp_path: Path) -> Iterator[LazyMount]:
    with LazyMount(tmp_path) as mount:
        yield mount


def write(path: Path, data: bytes, sync: bool) -> None:
    with open(path, "wb") as file:
        file.write(data)
        if sync:
            file.flush()
            os.fsync(file.fileno())


def test_the_file_system_drops_what_was_not_synced(lazy: LazyMount) -> None:
    disk = lazy.mountpoint
    write(disk / "kept", b"synced", sync=True)
    write(disk / "name-only", b"not synced", sync=False)
    sync_directory(disk)  # both names are on the disk now; only one content
    write(disk / "kept", b"synced, then overwritten", sync=False)
    write(disk / "new", b"synced, its folder not", sync=True)
    assert (disk / "kept").read_bytes() == b"synced, then overwritten"  # the page cache, before a cut
    lazy.cut()
    assert (disk / "kept").read_bytes() == b"synced"
    assert (disk / "name-only").read_bytes() == b""
    assert not (disk / "new").exists()


def test_a_rename_lasts_once_its_folder_is_synced(lazy: LazyMount) -> None:
    disk = lazy.mountpoint
    write(disk / "file", b"old", sync=True)
    sync_directory(disk)
    write(disk / "file.tmp", b"new", sync=True)
    os.replace(disk / "file.tmp", disk / "file")
    lazy.cut()
    assert (disk / "file").read_bytes() == b"old" and not (disk / "file.tmp").exists()
    write(disk / "file.tmp", b"new", sync=True)
    os.replace(disk / "file.tmp", disk / "file")
    sync_directory(disk)
    lazy.cut()
    assert (disk / "file").read_bytes() == b"new" and sorted(os.listdir(disk)) == ["file"]


def test_it_fails_on_command_as_a_dying_card_does(lazy: LazyMount) -> None:
    disk = lazy.mountpoint
    lazy.fail("fsync", "journal")
    with pytest.raises(OSError) as failed:
        write(disk / "journal.db", b"x", sync=True)
    assert failed.value.errno == 5  # EIO
    write(disk / "journal.db", b"y", sync=True)  # once: the next fsync works
    lazy.fail("write", "registry")
    with pytest.raises(OSError), open(disk / "registry.db", "wb") as file:
        file.write(b"z")
        file.flush()


def test_companion_run_loses_nothing_acknowledged_across_power_cuts(tmp_path: Path) -> None:
    """24 cuts at random moments across every kind of write (bench/power_cuts.py runs 200 and
    more): see tests/power_cuts.py and tests/power_cut_work.py."""
    if not MOSQUITTO:
        pytest.skip("needs Debian's mosquitto (scripts/test installs it): the results' outbox is cut too")
    report = power_cuts.run(tmp_path, cuts=24, seed=26)
    assert report.problems == []
    assert report.cuts == 24 and report.inputs >= 24 and report.retried >= 1
    for kind in ("start", "game", "game-over", "pair", "enroll", "import"):
        assert report.acknowledged[kind] >= 1, kind
    assert report.results >= 1  # a game played out, its result at the broker
