"""A PN532 board on I2C (`pn532:i2c1`) or SPI (`pn532:spi0.0`) through Adafruit's CircuitPython
driver, with the chip of tests/pn532_emulator.py on a stand-in for Blinka's `busio.I2C` or
`busio.SPI` (tests/pn532_buses.py): a Spy Team trick on the daemon, a held card, the board off the
bus and back, and enrollment writing the card id, on each bus (issue 11)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion.core.config import ConfigError
from companion.games.catalog import load_catalog
from companion.readers.enrollment import Enrollment
from companion.readers.families import readers_from_config
from companion.readers.known import KnownTags
from companion.readers.registry import Registry
from tests.nfc_helpers import names, nfc_config, play_a_trick_on_a_board, running_daemon
from tests.pn532_buses import Pn532Board, Pn532I2cBus, Pn532SpiBus
from tests.pn532_emulator import Tag, ndef_tlv, numbered_ntag, text_message
from tests.spy_team_play import trick_cards
from tests.waiting import wait_for

busio = pytest.importorskip("busio", reason="needs the pn532 extra (Adafruit Blinka)")
pytest.importorskip("adafruit_pn532", reason="needs the pn532 extra")


@pytest.fixture(params=["i2c1", "spi0.0"])
def device(request: pytest.FixtureRequest) -> str:
    return f"pn532:{request.param}"


@pytest.fixture
def bus(device: str, monkeypatch: pytest.MonkeyPatch) -> Pn532Board:
    if device == "pn532:i2c1":
        board: Pn532Board = Pn532I2cBus()
        monkeypatch.setattr(busio, "I2C", board)
    else:
        board = Pn532SpiBus()
        monkeypatch.setattr(busio, "SPI", board)
    return board


def test_a_spy_team_trick_with_a_held_card_and_the_board_off_the_bus(
    device: str, bus: Pn532Board, tmp_path: Path
) -> None:
    config = nfc_config(tmp_path, {"device": device, "debounce": 0.3, "retry": 0.1})
    with running_daemon(config) as (daemon, cues):
        assert daemon.readers[0].known is daemon.known  # type: ignore[attr-defined]  # one, shared
        play_a_trick_on_a_board(daemon, cues, bus)
        status = daemon.health()["readers"][0]
        assert (
            status["kind"] == device.replace(":", "-")[:9]
            and status["capabilities"] == "reads and writes the card id (NDEF)"
        )


def test_enrollment_writes_the_card_id_through_the_driver(
    device: str, bus: Pn532Board, tmp_path: Path
) -> None:
    registry = Registry(tmp_path / "cards.db")
    session = Enrollment(load_catalog()["spy"], registry)
    [reader] = readers_from_config([{"device": device, "debounce": 0.2, "retry": 0.1}])
    reader.intercept = session.offer  # type: ignore[attr-defined]
    reader.start(lambda **tap: None)
    tag = numbered_ntag(40)
    try:
        bus.put(tag)
        wait_for(lambda: session.position == 1)
        last = session.progress()["last"]
        assert last["wrote"] is True and last["warning"] == ""
        assert tag.user_data().startswith(ndef_tlv(text_message(session.cards[0].id)))
        assert registry.lookup(tag.uid.hex()) == session.cards[0].id
    finally:
        reader.stop()
        registry.close()


def test_only_the_header_buses() -> None:
    for device in ("pn532:i2c3", "pn532:spi0.1", "pn532:spi1.0"):
        with pytest.raises(ConfigError, match=r"only a PN532 on i2c1 \(GPIO 2/3\) or spi0.0"):
            readers_from_config([{"device": device}])


def test_its_pins_are_reserved(device: str) -> None:
    from companion.pins import devices as pins

    held = pins.reader_pins([{"device": device}, {"device": "tty:AMA0:pn532"}])
    bus_pins, label, taken = (
        ([2, 3], "I2C bus 1", 3) if device == "pn532:i2c1" else ([7, 8, 9, 10, 11], "SPI bus 0", 11)
    )
    assert sorted(held) == [*bus_pins, 14, 15] and label in held[bus_pins[0]]
    with pytest.raises(ConfigError, match=f"GPIO {taken}"):
        pins.PinLayout.parse({"next_button": taken}, reserved=held)


def test_doctor_wakes_it(
    device: str, bus: Pn532Board, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from companion.appliance.doctor.readers import check_reader
    from companion.readers import pn532

    name = device.partition(":")[2]
    kernel_device = tmp_path / name
    monkeypatch.setitem(pn532.BUSES, name, replace(pn532.BUSES[name], device=kernel_device))
    label, turn_on = (
        ("I2C bus 1", "dtparam=i2c_arm=on") if name == "i2c1" else ("SPI bus 0", "dtparam=spi=on")
    )
    off = check_reader(device)
    assert off.status == "FAIL" and "the bus is off" in off.message and turn_on in off.fix
    kernel_device.touch()
    assert check_reader(device).line().startswith(f"ok   reader: PN532 v1.6 on {label}")
    bus.unplug()
    gone = check_reader(device)
    assert gone.status == "FAIL" and f"no PN532 answers on {label}" in gone.message


def test_auto_finds_a_pn532_on_i2c_bus_1_and_never_probes_spi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`auto` looked for PC/SC and nfcpy only: a PN532 on I2C was never found. It is looked for once
    /dev/i2c-1 exists (a stand-in path here) and taken when it answers, while the daemon runs; a
    board on SPI is never probed blind."""
    from companion.readers import families, pn532
    from companion.readers.families import main

    looks: list[float] = []  # each time auto looked for the PN532 on I2C

    def counted(finder: Any) -> Any:
        def look() -> Any:
            looks.append(time.monotonic())
            return finder()

        return look

    search = [
        (name, counted(find) if name.startswith("pn532:i2c1") else find)
        for name, find in families.AUTO_SEARCH
    ]
    monkeypatch.setattr(families, "AUTO_SEARCH", tuple(search))
    i2c, spi = Pn532I2cBus(), Pn532SpiBus()
    monkeypatch.setattr(busio, "I2C", i2c)
    monkeypatch.setattr(busio, "SPI", spi)
    for name in ("i2c1", "spi0.0"):
        monkeypatch.setitem(pn532.BUSES, name, replace(pn532.BUSES[name], device=tmp_path / name))
    (tmp_path / "spi0.0").touch()  # SPI on, a PN532 on it answering: still not auto's to probe
    i2c.unplug()
    config = nfc_config(tmp_path, {"device": "auto", "debounce": 0.3, "retry": 0.1})
    with running_daemon(config) as (daemon, cues):

        def reader() -> dict[str, Any]:
            return dict(daemon.health()["readers"][0])

        assert reader()["kind"] == "virtual" and daemon.health()["reader"] == "ok"
        assert "pn532:i2c1 (a PN532 at 0x24 on /dev/i2c-1)" in reader()["searching"]
        assert daemon.cards.nfc_readers == 0  # the virtual mat cannot enroll
        wait_for(lambda: len(looks) >= 3)  # it looked three times...
        assert i2c.transfers == 0  # ...but with no /dev/i2c-1, the bus is left alone
        (tmp_path / "i2c1").touch()  # I2C turned on, the board not answering yet
        wait_for(lambda: i2c.transfers > 0)
        assert reader()["kind"] == "virtual"
        i2c.plug()
        wait_for(lambda: reader()["kind"] == "pn532-i2c" and reader()["connected"])
        assert reader()["device"] == "pn532:i2c1"
        daemon.table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"], {"start": 0})
        daemon.table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
        daemon.table.act({"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
        card = trick_cards(daemon.table.view(), winner=1)[0]
        i2c.put(numbered_ntag(50, card))
        wait_for(lambda: daemon.table.view()["played"] == [card])
        [found] = [cue for cue in cues if cue["cue"] == "reader-back"]
        assert found["data"]["found"] == "pn532:i2c1" and "reader-lost" not in names(cues)
        # Enrollment takes the tags of the reader auto found.
        i2c.lift()
        assert daemon.cards.nfc_readers == 1
        session = daemon.cards.start("spy")
        i2c.put(numbered_ntag(51))
        wait_for(lambda: session.position == 1)
        daemon.cards.stop()
    assert spi.transfers == 0
    # What the installer writes into the config.
    assert main() == 0 and capsys.readouterr().out == "pn532:i2c1\n"


def test_a_repeat_tap_is_served_from_the_cache_until_enrollment_rewrites_the_tag(
    device: str, bus: Pn532Board, tmp_path: Path
) -> None:
    known = KnownTags(life=60)  # long: this is about what is read, not how long an entry lives
    [reader] = readers_from_config([{"device": device, "debounce": 0, "retry": 0.1}], known=known)
    taps: list[dict[str, Any]] = []
    reader.start(lambda **tap: taps.append(tap))
    tag = numbered_ntag(41, "peanuts/secret-police-2")
    registry = Registry(tmp_path / "cards.db")
    try:
        bus.put(tag)
        wait_for(lambda: len(taps) == 1)
        assert tag.data_reads() == [4, 8]  # the two READs that cover its card id, once
        bus.lift()
        wait_for(lambda: reader.filter.present is None)  # type: ignore[attr-defined]
        commands = len(bus.chip.stats.commands)
        bus.put(tag)
        wait_for(lambda: len(taps) == 2)
        assert taps[1]["card"] == "peanuts/secret-police-2" and tag.data_reads() == [4, 8]
        assert 0x40 not in bus.chip.stats.commands[commands:]  # no InDataExchange: activation only
        session = Enrollment(load_catalog()["spy"], registry, force=True)
        reader.intercept = session.offer  # type: ignore[attr-defined]
        bus.lift()
        wait_for(lambda: reader.filter.present is None)  # type: ignore[attr-defined]
        bus.put(tag)
        wait_for(lambda: session.position == 1)
        reader.intercept = None  # type: ignore[attr-defined]
        bus.lift()
        wait_for(lambda: reader.filter.present is None)  # type: ignore[attr-defined]
        bus.put(tag)
        wait_for(lambda: len(taps) == 3)
        assert taps[2]["card"] == session.cards[0].id  # read again, never the old card id
    finally:
        reader.stop()
        registry.close()


class TripleSizeUid(Tag):
    """A tag with a 10-byte UID: its InListPassiveTarget answer is longer than a 7-byte UID's."""

    atqa = b"\x00\x44"
    sak = 0x20

    def __init__(self) -> None:
        super().__init__()
        self.uid = bytes.fromhex("04112233445566778899")

    def answer(self, command: bytes) -> bytes | None:
        return self.refuse() if self.selected else None


def test_a_tag_with_a_longer_answer_is_read_again_in_full_and_counts_by_its_uid(
    device: str, bus: Pn532Board
) -> None:
    [reader] = readers_from_config([{"device": device, "retry": 0.1}])
    taps: list[dict[str, Any]] = []
    reader.start(lambda **tap: taps.append(tap))
    try:
        wait_for(lambda: reader.status()["connected"])
        bus.put(TripleSizeUid())
        wait_for(lambda: taps)
        assert taps == [{"uid": "04112233445566778899", "seat": None}]
        assert reader.status()["connected"] and reader.status()["opens"] == 1  # never taken for lost
    finally:
        reader.stop()
