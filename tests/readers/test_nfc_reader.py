"""The nfcpy reader backend against an emulated tag: nfcpy's real ContactlessFrontend on its UDP
driver reads a Type 3 Tag that nfcpy emulates in another process (tests/nfc_emulator.py)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from companion.core.config import ConfigError
from companion.readers import VirtualReader, families
from companion.readers.base import TapFilter
from companion.readers.health import LinkWatch
from companion.readers.known import KnownTags
from companion.readers.nfc import NfcReader, ReaderSettings, readers_from_config
from tests.nfc_emulator import TagEmulator, TagSpec, uid
from tests.nfc_helpers import Taps, free_udp_port
from tests.waiting import wait_for


@pytest.fixture
def emulator() -> Iterator[TagEmulator]:
    with TagEmulator(free_udp_port()) as running:
        yield running


def reading(emulator: TagEmulator, taps: Taps, **options: Any) -> NfcReader:
    options.setdefault("debounce", 0.2)
    options.setdefault("retry", 0.2)
    reader = NfcReader(emulator.path, **options)
    reader.start(taps)
    return reader


def reads(reader: NfcReader) -> int:
    return int(reader.status()["reads"])


def test_a_card_id_written_on_the_tag_is_the_tap(emulator: TagEmulator) -> None:
    taps = Taps()
    emulator.present(uid(1), "spy-team/red-1")  # first: the reader's very first poll finds it
    reader = reading(emulator, taps)
    try:
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"card": "spy-team/red-1", "seat": None}]
        assert reader.status()["connected"] is True
        assert reader.status()["path"] == emulator.path
    finally:
        reader.stop()


def test_a_type_3_card_the_cache_knows_is_held_without_the_reader_lost(emulator: TagEmulator) -> None:
    """The known-tag cache names Type 2 tags only. A Type 3 tag it remembered (put back within its
    life, or lying there when a lost reader came back) was checked for presence by a 106A selection
    its 8-byte IDm cannot make: nfcpy's ValueError, and the reader taken for lost while the card lay
    there (seen as a flaky test_a_reader_pulled_out_and_plugged_back)."""
    taps, cues = Taps(), []
    emulator.present(uid(1), "spy-team/red-1")
    reader = NfcReader(emulator.path, debounce=0.2, retry=0.2, watch=LinkWatch(cues.append))
    reader.known = KnownTags(life=60)  # its card id still trusted when the reader first sees it
    reader.known.remember(uid(1), "spy-team/red-1", time.monotonic())
    reader.start(taps)
    try:
        wait_for(lambda: len(taps) == 1)
        polls = reader._polls
        wait_for(lambda: reader._polls >= polls + 5)  # held: its presence checked again and again
        assert cues == [] and reader.status()["connected"]
        assert taps.taps == [{"card": "spy-team/red-1", "seat": None}]
    finally:
        reader.stop()


@pytest.mark.parametrize(
    "spec",
    [
        TagSpec(uid(2), ndef=False),  # not NDEF formatted
        TagSpec(uid(2), None),  # formatted, empty
        TagSpec(uid(2), "sxf:spy"),  # a text record that is no card id
    ],
    ids=["no-ndef", "empty-ndef", "other-text"],
)
def test_a_tag_without_a_card_id_is_sent_by_its_uid(emulator: TagEmulator, spec: TagSpec) -> None:
    taps = Taps()
    emulator.present(spec)
    reader = reading(emulator, taps, seat=3)
    try:
        wait_for(lambda: len(taps) == 1)
        assert taps.taps == [{"uid": uid(2), "seat": 3}]
    finally:
        reader.stop()


def test_a_card_lying_on_the_reader_counts_once_and_again_when_put_back(emulator: TagEmulator) -> None:
    taps = Taps()
    emulator.present(uid(1), "spy-team/red-1")
    reader = reading(emulator, taps, debounce=0.0)  # the interval has its own test
    try:
        wait_for(lambda: len(taps) == 1)
        # Still lying there: the reader keeps checking its presence (nfcpy's check for a Type 3
        # tag, each counted in `_polls`), and a presence check is neither a read nor a new
        # activation of the tag.
        activations = len(emulator.activations())
        polls = reader._polls
        wait_for(lambda: reader._polls >= polls + 8)
        assert len(taps) == 1
        assert reads(reader) == 1
        assert len(emulator.activations()) == activations
        lifted = emulator.lift()
        wait_for(lambda: reader.filter.present is None)  # the reader saw it go
        assert reader.filter.left_at - lifted < 1.0
        emulator.present(uid(1), "spy-team/red-1")
        wait_for(lambda: len(taps) == 2)
        assert taps.taps[1] == {"card": "spy-team/red-1", "seat": None}
        # Another card right after is a tap at once: the debounce is per card.
        emulator.present(uid(2), "spy-team/red-2")
        wait_for(lambda: len(taps) == 3)
        assert taps.taps[2] == {"card": "spy-team/red-2", "seat": None}
    finally:
        reader.stop()


def test_the_same_card_back_within_the_debounce_interval_is_ignored(emulator: TagEmulator) -> None:
    taps = Taps()
    emulator.present(uid(1), "spy-team/red-1")
    reader = reading(emulator, taps, debounce=30.0)
    try:
        wait_for(lambda: len(taps) == 1)
        emulator.lift()
        wait_for(lambda: reader.filter.present is None)
        emulator.present(uid(1), "spy-team/red-1")
        wait_for(lambda: reads(reader) == 2)  # read again...
        assert len(taps) == 1  # ...but no tap
        assert reader.status()["taps"] == 1
    finally:
        reader.stop()


def test_the_reader_stops_promptly_and_releases_the_tag(emulator: TagEmulator) -> None:
    taps = Taps()
    emulator.present(uid(1), "spy-team/red-1")
    reader = reading(emulator, taps)
    wait_for(lambda: len(taps) == 1)
    thread = reader._thread
    reader.stop()
    assert thread is not None and not thread.is_alive()
    # A new reader on the same path finds the card again: the old one really let go of it.
    again = Taps()
    second = reading(emulator, again)
    try:
        wait_for(lambda: len(again) == 1)
    finally:
        second.stop()


def test_tap_filter_rules() -> None:
    taps = TapFilter(debounce=1.0)
    assert taps.arrived("a", 0.0) is True
    assert taps.arrived("a", 5.0) is False  # present all along (e.g. across a reader outage)
    taps.left(5.0)
    assert taps.arrived("a", 5.5) is False  # back within the interval
    taps.left(5.6)
    assert taps.arrived("a", 6.2) is False  # the window restarts at each lift
    taps.left(6.3)
    assert taps.arrived("a", 7.4) is True  # lifted long enough: a new tap
    assert taps.arrived("b", 7.5) is True  # another card replaces it: a tap, and "a" has left
    assert taps.last == "a" and taps.left_at == 7.5
    taps.left(7.6)
    assert taps.arrived("a", 7.7) is True  # the window is for the card that left last ("b")
    assert taps.present == "a"


def test_reader_settings_are_checked() -> None:
    settings = ReaderSettings.parse({"device": "usb:054c:06c1", "seat": 2, "debounce": 0.5, "retry": 1})
    assert (settings.device, settings.seat, settings.debounce, settings.retry) == (
        "usb:054c:06c1",
        2,
        0.5,
        1.0,
    )
    assert ReaderSettings.parse({}).device == "auto"
    assert NfcReader("udp:127.0.0.1:5000").targets == ["212F"]
    assert NfcReader("usb").targets == ["106A"]  # NTAG21x and MIFARE Classic: no 106B/212F polls
    for bad in (
        {"seat": -1},
        {"seat": "2"},
        {"debounce": "x"},
        {"retry": -1},
        {"device": ""},
        {"targets": "212F"},
    ):
        with pytest.raises(ConfigError):
            ReaderSettings.parse({"device": "usb", **bad})


def test_a_misspelt_reader_key_is_refused_not_taken_for_auto(tmp_path: Path) -> None:
    # `devcie` would quietly mean the default device, "auto": refused, naming the key, in one line.
    with pytest.raises(ConfigError) as refused:
        ReaderSettings.parse({"devcie": "tty:AMA0:pn532"})
    assert str(refused.value) == (
        "a [reader] / [[readers]] entry has unknown keys: devcie "
        "(known: debounce, device, retry, seat, targets; see docs/nfc.md)"
    )
    with pytest.raises(ConfigError, match="debounse"):
        readers_from_config([{"device": "virtual"}, {"device": "virtual", "seat": 1, "debounse": 2}])
    # `companion run` says it and stops (exit 2) before it listens.
    config = tmp_path / "companion.toml"
    config.write_text('[server]\ntoken = "t"\nport = 1\n[reader]\ndevcie = "tty:AMA0:pn532"\n')
    command = [sys.executable, "-m", "companion.appliance.cli", "run", "--config", str(config), "--mock-pins"]
    command += ["--db", str(tmp_path / "j.db")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "devcie" in done.stderr.splitlines()[-1]


def test_auto_without_a_reader_falls_back_to_the_virtual_mat(caplog: pytest.LogCaptureFixture) -> None:
    if families.find_device() is not None:
        pytest.skip("a real NFC reader is plugged in here")
    caplog.set_level("INFO")
    readers = families.readers_from_config([{"device": "auto"}, {"device": "virtual"}])
    # The `auto` reader stands for the virtual mat while it keeps looking (tests/readers/test_pn532.py).
    assert [r.status()["kind"] for r in readers] == ["virtual", "virtual"]
    assert isinstance(readers[1], VirtualReader)
    assert sum("the virtual reader stands in" in r.getMessage() for r in caplog.records) == 1
