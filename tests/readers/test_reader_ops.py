"""What stops a real table besides the reader itself (issue 16, 8): a journal the service's sandbox
makes read-only, the overlay file system, and enrollment beside the running service."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from companion.appliance.cli import main
from companion.appliance.doctor.storage import check_overlay
from companion.readers.frontend import close_frontend, open_frontend
from companion.table import journal
from companion.table.disk import sandbox_write_hint
from tests.pn532_emulator import Pn532Emulator

SERVICE = {"INVOCATION_ID": "0123", "STATE_DIRECTORY": "/var/lib/companion"}


def test_a_journal_outside_the_state_directory_is_named_with_the_drop_in_that_fixes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Under ProtectSystem=strict it looks like a read-only disk; the SD card is not to blame."""
    db = tmp_path / "games" / "journal.db"
    journal.Journal(db).close()  # made before the service ran in its sandbox
    monkeypatch.setattr(journal, "read_only_fs", lambda path: True)  # what statvfs says in the sandbox
    for name, value in SERVICE.items():
        monkeypatch.setenv(name, value)
    caplog.set_level(logging.WARNING)
    opened = journal.Journal(db)
    try:
        assert opened.read_only
    finally:
        opened.close()
    [line] = [r.getMessage() for r in caplog.records if "journal" in r.getMessage()]
    assert f"ReadWritePaths={db.parent}" in line and "systemctl edit companion" in line
    assert "read-only disk" not in line
    # Inside the state directory, or outside systemd, a read-only journal is the disk's.
    assert sandbox_write_hint("/var/lib/companion/journal.db", SERVICE) is None
    assert sandbox_write_hint(db, {}) is None


def test_doctor_warns_that_an_overlay_root_forgets_the_journal(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text(
        "overlayroot / overlay rw,relatime,lowerdir=/media/root-ro,upperdir=/media/root-rw/overlay 0 0\n"
        "/dev/mmcblk0p1 /boot/firmware vfat rw,relatime 0 0\n"
    )
    [check] = check_overlay(Path("/var/lib/companion/journal.db"), mounts)
    assert check.status == "warn" and "lost at every reboot" in check.message
    assert check_overlay(Path("/boot/firmware/journal.db"), mounts) == []
    # A container's overlay root (upper dir on disk) keeps its writes: no warning.
    mounts.write_text("overlay / overlay rw,lowerdir=/var/lib/docker/l/A,upperdir=/var/lib/docker/B 0 0\n")
    assert check_overlay(Path("/var/lib/companion/journal.db"), mounts) == []


def test_enrolling_on_a_reader_the_service_holds_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Pn532Emulator(tmp_path) as board:
        service = open_frontend(board.path)  # the running daemon's reader
        try:
            command = ["cards", "--cards-db", str(tmp_path / "cards.db"), "enroll", "--game", "spy-team"]
            assert main([*command, "--device", board.path]) == 2
        finally:
            close_frontend(service)
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "in use by another process" in error and "enroll from the tablet" in error


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root, as `sudo companion cards ...` has")
def test_a_registry_made_by_root_belongs_to_the_service_user(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    os.chown(state, 4242, 4242)  # the service user's state directory
    box = tmp_path / "box.json"
    box.write_text('{"format": "companion-cards", "version": 1, "tags": []}')
    db = state / "cards.db"
    main(["cards", "--cards-db", str(db), "import", str(box)])
    assert db.exists()
    assert (db.stat().st_uid, db.stat().st_gid) == (4242, 4242)
    assert all(p.stat().st_uid == 4242 for p in state.iterdir())
