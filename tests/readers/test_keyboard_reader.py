"""USB keyboard readers (`hid:`): recorded key events through evdev's own decoding
(tests/keyboard_recording.py), every `uid_format`, a held card, an unplug and replug, enrollment
of a UID-only reader, and a Spy Team trick on the daemon (issue 11)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import evdev
import pytest

from companion.core.config import ConfigError
from companion.games.catalog import load_catalog
from companion.readers.enrollment import Enrollment
from companion.readers.families import readers_from_config
from companion.readers.keyboard import KeyboardReader, uid_from_line
from companion.readers.registry import Registry, registry_path
from tests.keyboard_recording import Keyboards, RecordedKeyboard
from tests.nfc_helpers import names, nfc_config, running_daemon
from tests.spy_team_play import trick_cards
from tests.waiting import wait_for, wait_polls

PATH = "/dev/input/by-id/usb-Sycreader_RFID_Technology-event-kbd"
UID = "04a1b2c3"


@pytest.mark.parametrize(
    ("typed", "uid_format"),
    [
        ("04A1B2C3", "hex"),
        ("04a1b2c3", "hex"),
        ("C3B2A104", "hex-reversed"),
        ("77705923", "decimal"),
        ("0077705923", "decimal"),
        ("3283263748", "decimal-reversed"),
    ],
)
def test_every_uid_format_gives_the_uid_other_readers_report(typed: str, uid_format: str) -> None:
    assert uid_from_line(typed, uid_format) == UID


def test_seven_byte_uids_and_misreads() -> None:
    assert uid_from_line("04A1B2C3D4E5F6", "hex") == "04a1b2c3d4e5f6"
    seven = int.from_bytes(bytes.fromhex("04a1b2c3d4e5f6"), "big")
    assert uid_from_line(str(seven), "decimal") == "04a1b2c3d4e5f6"
    assert uid_from_line("", "hex") is None
    assert uid_from_line("12AB", "decimal") is None


def test_a_reader_types_through_evdev_and_is_grabbed(monkeypatch: pytest.MonkeyPatch) -> None:
    keyboard = RecordedKeyboard(PATH)
    monkeypatch.setattr(evdev, "InputDevice", Keyboards(keyboard))
    taps: list[dict[str, Any]] = []
    reader = KeyboardReader(f"hid:{PATH}", 1, uid_format="decimal-reversed", debounce=0.3, retry=0.1)
    reader.start(lambda **tap: taps.append(tap))
    try:
        wait_for(lambda: reader.status()["connected"])
        assert keyboard.grabbed  # the UIDs never reach a console
        keyboard.type("3283263748", repeat=True)
        wait_for(lambda: taps)
        keyboard.type("3283263748")  # a reader that repeats while the card stays: the same tap
        keyboard.type("3283263748")
        wait_polls(reader.status, 2)  # a whole look at the device after the repeats: they were read
        assert taps == [{"uid": UID, "seat": 1}]
        # Put back once the debounce (0.3 s) is over, as the tap rule measures it from the last lift.
        wait_for(lambda: time.monotonic() - reader.filter.left_at > 0.3)
        keyboard.type("3283263748")  # a new tap
        keyboard.type("xyz")  # a misread (letters a decimal reader never types) counts as nothing
        wait_for(lambda: len(taps) == 2)
        wait_for(lambda: reader.status()["misreads"] == 1)
        assert taps[1] == {"uid": UID, "seat": 1}
        status = reader.status()
        assert status["kind"] == "keyboard" and status["capabilities"] == "UID only"
    finally:
        reader.stop()
    assert not keyboard.grabbed  # let go on stop


def test_uid_format_is_checked() -> None:
    with pytest.raises(ConfigError, match="uid_format"):
        readers_from_config([{"device": f"hid:{PATH}", "uid_format": "octal"}])
    with pytest.raises(ConfigError, match="unknown keys: targets"):
        readers_from_config([{"device": f"hid:{PATH}", "targets": ["106A"]}])


def test_enrolling_on_a_uid_only_reader_registers_the_uid(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keyboard = RecordedKeyboard(PATH)
    monkeypatch.setattr(evdev, "InputDevice", Keyboards(keyboard))
    registry = Registry(tmp_path / "cards.db")
    session = Enrollment(load_catalog()["spy"], registry)
    reader = KeyboardReader(f"hid:{PATH}", debounce=0.2, retry=0.1)
    reader.intercept = session.offer
    reader.start(lambda **tap: None)
    try:
        wait_for(lambda: reader.status()["connected"])
        keyboard.type("04A1B2C3")
        wait_for(lambda: session.position == 1)
        last = session.progress()["last"]
        assert last["status"] == "enrolled" and last["wrote"] is False and last["uid"] == UID
        assert registry.lookup(UID) == session.cards[0].id
    finally:
        reader.stop()
        registry.close()


def test_a_spy_team_trick_on_a_seat_reader_with_an_unplug(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keyboard = RecordedKeyboard(PATH)
    monkeypatch.setattr(evdev, "InputDevice", Keyboards(keyboard))
    config = nfc_config(
        tmp_path, {"device": f"hid:{PATH}", "uid_format": "hex", "debounce": 0.3, "retry": 0.1}
    )
    with running_daemon(config) as (daemon, cues):
        daemon.table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"], {"start": 0})
        daemon.table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
        daemon.table.act({"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
        cards = trick_cards(daemon.table.view(), winner=1)
        registry = Registry(registry_path(config))
        uids = [f"0400000{n}" for n in range(4)]
        for uid, card in zip(uids, cards, strict=True):
            registry.register(uid, card)
        registry.close()
        wait_for(lambda: daemon.health()["reader"] == "ok")
        assert daemon.cards.nfc_readers == 1  # a UID-only reader enrolls too (by UID)

        keyboard.type(uids[0].upper())
        keyboard.type(uids[0].upper())  # typed twice for one tap: counted once
        wait_for(lambda: len(daemon.table.view()["played"]) == 1)
        keyboard.unplug()
        wait_for(lambda: daemon.health()["reader"] == "lost")
        keyboard.plug()
        wait_for(lambda: daemon.health()["reader"] == "ok")
        assert keyboard.grabbed  # grabbed again on the way back
        for uid in uids[1:]:  # three cards one after the other, each read as its own tap
            keyboard.type(uid.upper())
        wait_for(lambda: len([c for c in cues if c["cue"] == "trick-won"]) == 1)
        assert daemon.table.view()["played"] == cards
        assert names(cues).count("card-accepted") == 2 + 4
        assert names(cues).count("reader-lost") == 1 and names(cues).count("reader-back") == 1
        [won] = [c for c in cues if c["cue"] == "trick-won"]
        assert won["seat"] == 1


def test_doctor_grabs_a_keyboard_reader_for_a_moment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from companion.appliance.doctor.readers import check_reader

    path = tmp_path / "usb-reader-event-kbd"
    path.touch()
    keyboard = RecordedKeyboard(str(path))
    monkeypatch.setattr(evdev, "InputDevice", Keyboards(keyboard))
    assert check_reader(f"hid:{path}").line().startswith(f"ok   reader: keyboard reader {path}: present")
    assert not keyboard.grabbed  # let go again
    keyboard.grab()  # another program holds it (a console, a second companion)
    busy = check_reader(f"hid:{path}")
    assert busy.status == "FAIL" and "another program holds it" in busy.message
    gone = check_reader("hid:/dev/input/by-id/usb-nothing-event-kbd")
    assert gone.status == "FAIL" and "no device at" in gone.message
