"""An RC522 board (`rc522:spi0.0`, `rc522:spi0.1`) through Joy-IT's `JoyIT_RC522` library, with the
MFRC522 of tests/rc522_emulator.py behind a stand-in for `spidev.SpiDev` and the reset pin on the
table's gpiozero MockFactory: a Spy Team trick on the daemon, a held card, the board off the bus
and back, enrollment per tag, the pins it takes and doctor (issue 11)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from gpiozero import Device, DigitalOutputDevice
from gpiozero.pins.mock import MockFactory

from companion.core.config import ConfigError
from companion.games.catalog import load_catalog
from companion.readers.enrollment import Enrollment
from companion.readers.families import readers_from_config
from companion.readers.known import KnownTags
from companion.readers.registry import Registry
from tests.nfc_helpers import SseClient, nfc_config, play_a_trick_on_a_board, running_daemon
from tests.pn532_emulator import MifareClassic, ndef_tlv, numbered_ntag, text_message
from tests.rc522_emulator import SITECUSTOMIZE, WIRE_ENV, Rc522Board, SpiWire, on_the_bus
from tests.servers import running_companion
from tests.spy_team_play import trick_cards
from tests.waiting import wait_for, wait_polls

ROOT = Path(__file__).resolve().parents[2]
spidev = pytest.importorskip("spidev", reason="needs the rc522 extra (spidev)")
pytest.importorskip("JoyIT_RC522", reason="needs the rc522 extra (joyit-rc522)")


@pytest.fixture(params=["spi0.0", "spi0.1"])
def device(request: pytest.FixtureRequest) -> str:
    return f"rc522:{request.param}"


@pytest.fixture
def board(device: str, monkeypatch: pytest.MonkeyPatch) -> Rc522Board:
    """An RC522 on the device's chip select; the reset pin on mock pins outside a daemon."""
    chip_select = int(device[-1])
    spi_dev, [board] = on_the_bus((0, chip_select))
    monkeypatch.setattr(spidev, "SpiDev", spi_dev)
    monkeypatch.setattr(Device, "pin_factory", MockFactory())
    return board


def test_a_spy_team_trick_with_a_held_card_and_the_board_off_the_bus(
    device: str, board: Rc522Board, tmp_path: Path
) -> None:
    config = nfc_config(tmp_path, {"device": device, "debounce": 0.3, "retry": 0.1, "reset_pin": 12})
    config = replace(config, pins={"undo_button": 4})  # GPIO 12, the undo button's, goes to the reader
    with running_daemon(config) as (daemon, cues):
        wait_for(lambda: daemon.health()["reader"] == "ok")
        status = daemon.health()["readers"][0]
        assert status["kind"] == "rc522" and status["capabilities"] == "reads and writes the card id (NDEF)"
        assert Device.pin_factory.pin(12).state == 1  # the library holds the chip out of reset
        play_a_trick_on_a_board(daemon, cues, board)
    DigitalOutputDevice(12).close()  # the reader let its reset pin go: free to take again


def test_a_spy_team_trick_through_companion_run(tmp_path: Path) -> None:
    """The daemon in its own process, its `spidev.SpiDev` carrying each transfer to the board here."""
    board = Rc522Board()
    wire = SpiWire(tmp_path / "spi.sock", {(0, 0): board})
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {WIRE_ENV: str(wire.path), "PYTHONPATH": f"{tmp_path / 'hook'}:{ROOT}"}
    config = tmp_path / "companion.toml"
    config.write_text('[reader]\ndevice = "rc522:spi0.0"\ndebounce = 0.3\nretry = 0.2\n')
    with running_companion(tmp_path / "journal.db", "--config", str(config), env=env) as table:

        def reader() -> dict[str, Any]:
            return dict(table.call("GET", "/healthz")["readers"][0])

        wait_for(lambda: reader()["connected"])
        assert reader()["kind"] == "rc522"
        events = SseClient(table.url)
        try:
            table.call(
                "POST",
                "/api/games",
                {"game": "spy-team", "players": ["A", "B", "C", "D"], "options": {"start": 0}},
            )
            table.call("POST", "/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
            table.call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
            cards = trick_cards(table.call("GET", "/api/state"), winner=1)
            for number, card in enumerate(cards, start=1):
                tag = numbered_ntag(20 + number, card)
                board.put(tag)
                wait_for(lambda n=number: reader()["taps"] == n)  # type: ignore[misc]
                if number == 1:
                    wait_polls(reader, 30)  # held, polled 30 times: one card played
                    assert len(table.call("GET", "/api/state")["played"]) == 1
                if number == 2:  # off the bus with the card on it, and back: not played again
                    board.unplug()
                    wait_for(lambda: not reader()["connected"])
                    board.plug(tag)
                    wait_for(lambda: reader()["connected"])
                    wait_polls(reader, 20)  # the card still lies there: not played again
                    assert reader()["taps"] == 2
                board.lift()
            # The reader counts a tap before the table takes it, and a card's cues follow its state:
            # wait for the state, then for the trick's cue itself.
            wait_for(lambda: table.call("GET", "/api/state")["played"] == cards)

            def cue_names() -> list[str]:
                return [data["cue"] for _, kind, data in events.events if kind == "cue"]

            wait_for(lambda: "trick-won" in cue_names() and cue_names().count("card-accepted") >= 2 + 4)
            cues = [data for _, kind, data in events.events if kind == "cue"]
            assert [cue["cue"] for cue in cues].count("card-accepted") == 2 + 4
            assert [cue["cue"] for cue in cues].count("reader-back") == 1
            [won] = [cue for cue in cues if cue["cue"] == "trick-won"]
            assert won["seat"] == 1
        finally:
            events.close()
            wire.close()


def test_enrollment_writes_the_card_id_or_registers_a_classic_by_uid(
    device: str, board: Rc522Board, tmp_path: Path
) -> None:
    registry = Registry(tmp_path / "cards.db")
    session = Enrollment(load_catalog()["spy"], registry)
    [reader] = readers_from_config([{"device": device, "debounce": 0.2, "retry": 0.1}])
    reader.intercept = session.offer  # type: ignore[attr-defined]
    reader.start(lambda **tap: None)
    tag, classic = numbered_ntag(40), MifareClassic("0a0b0c0d")
    try:
        board.put(tag)
        wait_for(lambda: session.position == 1)
        last = session.progress()["last"]
        assert last["wrote"] is True and last["warning"] == ""
        assert tag.user_data().startswith(ndef_tlv(text_message(session.cards[0].id)))
        assert registry.lookup(tag.uid.hex()) == session.cards[0].id
        board.put(classic)  # its pages need a key: known by its 4-byte UID
        wait_for(lambda: session.position == 2)
        assert session.progress()["last"]["wrote"] is False
        assert registry.lookup("0a0b0c0d") == session.cards[1].id
    finally:
        reader.stop()
        registry.close()


def test_only_the_header_chip_selects_and_a_gpio_for_reset() -> None:
    for device in ("rc522:spi1.0", "rc522:i2c1", "rc522:"):
        with pytest.raises(ConfigError, match=r"spi0.0 \(CE0, GPIO 8\) or spi0.1"):
            readers_from_config([{"device": device}])
    for pin in ("GPIO4", 1, 28, True):
        with pytest.raises(ConfigError, match="reset_pin"):
            readers_from_config([{"device": "rc522:spi0.0", "reset_pin": pin}])


def test_its_pins_are_reserved() -> None:
    from companion.pins import devices as pins

    held = pins.reader_pins([{"device": "rc522:spi0.0"}])
    assert sorted(held) == [4, 7, 8, 9, 10, 11] and "reset pin" in held[4]
    with pytest.raises(ConfigError, match="GPIO 4"):
        pins.PinLayout.parse({"next_button": 4}, reserved=held)
    two = [{"device": "rc522:spi0.0", "seat": 0}, {"device": "rc522:spi0.1", "seat": 1}]
    with pytest.raises(ConfigError, match="reset_pin GPIO 4 is already the reset pin"):
        pins.reader_pins(two)
    held = pins.reader_pins([two[0], {**two[1], "reset_pin": 12}])
    with pytest.raises(ConfigError, match="GPIO 12"):
        pins.PinLayout.parse({}, reserved=held)  # the undo button's default pin
    assert sorted(pins.reader_pins([two[0], {**two[1], "reset_pin": 12}])) == [4, 7, 8, 9, 10, 11, 12]


def test_doctor_finds_it(
    device: str, board: Rc522Board, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from companion.appliance.doctor.readers import check_reader
    from companion.readers import rc522

    name = device.partition(":")[2]
    kernel_device = tmp_path / f"spidev{name[3:]}"
    monkeypatch.setitem(rc522.BUSES, name, replace(rc522.BUSES[name], device=kernel_device))
    boot_config = tmp_path / "config.txt"
    monkeypatch.setattr(
        "companion.appliance.doctor.readers.BOOT_CONFIGS", (boot_config, Path("/nonexistent"))
    )
    boot_config.write_text("# dtparam=spi=on\ndtparam=audio=on\n")
    off = check_reader(device)
    assert off.status == "FAIL" and "SPI is off" in off.message and "raspi-config" in off.fix
    boot_config.write_text("dtparam=spi=on  # for the reader\n")  # turned on, not yet rebooted
    assert (
        check_reader(device).fix
        == f"{boot_config} already has dtparam=spi=on: reboot for the bus to appear (sudo reboot)"
    )
    kernel_device.touch()
    found = check_reader(device)
    assert found.status == "ok" and "MFRC522 (version 0x92) on SPI bus 0" in found.message, found.line()
    assert "reset on GPIO 4" in found.message
    DigitalOutputDevice(4).close()  # doctor let the reset pin go
    board.unplug()
    gone = check_reader(device)
    assert gone.status == "FAIL" and "no RC522 answers on SPI bus 0" in gone.message


def test_a_repeat_tap_is_served_from_the_cache_until_enrollment_rewrites_the_tag(
    device: str, board: Rc522Board, tmp_path: Path
) -> None:
    known = KnownTags(life=60)  # long: this is about what is read, not how long an entry lives
    [reader] = readers_from_config([{"device": device, "debounce": 0, "retry": 0.1}], known=known)
    taps: list[dict[str, Any]] = []
    reader.start(lambda **tap: taps.append(tap))
    tag = numbered_ntag(41, "peanuts/secret-police-2")
    registry = Registry(tmp_path / "cards.db")

    def lay_again() -> None:
        board.lift()
        wait_for(lambda: reader.filter.present is None)  # type: ignore[attr-defined]
        board.put(tag)

    try:
        board.put(tag)
        wait_for(lambda: len(taps) == 1)
        assert tag.data_reads() == [4, 8]  # the two READs that cover its card id, once
        polls = reader.status()["polls"]
        wait_for(lambda: reader.status()["polls"] >= polls + 5)  # held: a READ of page 0 each poll
        assert tag.data_reads() == [4, 8] and len(taps) == 1
        lay_again()
        wait_for(lambda: len(taps) == 2)
        assert taps[1]["card"] == "peanuts/secret-police-2" and tag.data_reads() == [4, 8]
        session = Enrollment(load_catalog()["spy"], registry, force=True)
        reader.intercept = session.offer  # type: ignore[attr-defined]
        lay_again()
        wait_for(lambda: session.position == 1)
        reader.intercept = None  # type: ignore[attr-defined]
        lay_again()
        wait_for(lambda: len(taps) == 3)
        assert taps[2]["card"] == session.cards[0].id  # read again, never the old card id
    finally:
        reader.stop()
        registry.close()


def test_an_empty_poll_is_a_few_transfers_not_two_thousand(device: str, board: Rc522Board) -> None:
    [reader] = readers_from_config([{"device": device, "retry": 0.1}])
    reader.start(lambda **tap: None)
    try:
        wait_for(lambda: reader.status()["connected"])
        wait_for(lambda: reader.status()["polls"] >= 5)
        polls, transfers = reader.status()["polls"], board.transfers
        wait_for(lambda: reader.status()["polls"] >= polls + 10)
        spent, done = board.transfers - transfers, reader.status()["polls"] - polls
        assert spent <= 5 * (done + 1), spent  # WUPA unanswered: 5 transfers (one poll may be half done)
    finally:
        reader.stop()
