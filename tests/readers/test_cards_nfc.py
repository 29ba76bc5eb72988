"""Enrollment on an emulated tag, through nfcpy: `companion cards enroll` writes the card id as an
NDEF text record on writable tags and registers every UID; the tablet does the same with the
daemon's reader, which hands its tags to the session instead of the game."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from companion.appliance.cli import main
from companion.games.catalog import load_catalog
from companion.readers.registry import Registry
from tests.nfc_emulator import TagEmulator, TagSpec, uid
from tests.nfc_helpers import AUTH, free_udp_port, nfc_config, running_daemon
from tests.waiting import wait_for

SPY_TEAM = load_catalog()["spy-team"]


def test_cards_enroll_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cards.db"
    registry = Registry(db)
    # A box already enrolled but for Red 1 and Blue 24: `--missing` walks through those two only.
    for number, card in enumerate(SPY_TEAM.cards):
        if card not in ("spy-team/red-1", "spy-team/blue-24"):
            registry.register(uid(100 + number), card)
    with TagEmulator(free_udp_port()) as emulator:
        command = ["cards", "--cards-db", str(db), "enroll", "--game", "spy-team", "--missing"]
        command += ["--device", emulator.path, "--debounce", "0"]
        exit_code: list[int] = []
        printed: list[str] = []

        def output() -> str:
            printed.append(capsys.readouterr().out)
            return "".join(printed)

        thread = threading.Thread(target=lambda: exit_code.append(main(command)), daemon=True)
        thread.start()
        try:
            # A blank, writable tag for Red 1: the card id is written on it, its UID registered.
            emulator.present(uid(1), None)
            wait_for(lambda: registry.lookup(uid(1)) == "spy-team/red-1")
            assert emulator.text() == "spy-team/red-1"
            assert registry.entry(uid(1)).ndef is True  # type: ignore[union-attr]
            # Red 3's tag for Blue 24: refused (without --force), the walk stays on Blue 24.
            emulator.present(uid(102), "spy-team/red-3")
            wait_for(lambda: "refused: This tag is already spy-team/red-3" in output())
            assert registry.lookup(uid(102)) == "spy-team/red-3"
            # A read-only tag without NDEF: registered by its UID only.
            emulator.present(uid(2), ndef=False, writable=False)
            thread.join(timeout=15)
            assert exit_code == [0]
        finally:
            thread.join(timeout=5)
    assert registry.lookup(uid(2)) == "spy-team/blue-24"
    assert registry.entry(uid(2)).ndef is False  # type: ignore[union-attr]
    assert registry.enrolled_cards("spy-team") == set(SPY_TEAM.cards)
    registry.close()
    out = output()
    assert "tap Red 1" in out and "tap Blue 24" in out and "[########################] 2/2 all done." in out


def test_a_tag_that_belongs_to_another_card_can_be_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "cards.db"
    registry = Registry(db)
    registry.register(uid(5), "spy-team/red-9")
    for number, card in enumerate(SPY_TEAM.cards):
        if card not in ("spy-team/red-1", "spy-team/red-9"):
            registry.register(f"05{number:012x}", card)
    with TagEmulator(free_udp_port()) as emulator:
        emulator.present(uid(5), "spy-team/red-9")  # written and registered as Red 9
        command = ["cards", "--cards-db", str(db), "enroll", "--game", "spy-team", "--missing", "--force"]
        assert main([*command, "--device", emulator.path]) == 0
        assert emulator.text() == "spy-team/red-1"  # rewritten
    assert registry.lookup(uid(5)) == "spy-team/red-1"
    registry.close()


def test_enroll_from_the_tablet_with_the_daemons_reader(tmp_path: Path) -> None:
    with TagEmulator(free_udp_port()) as emulator:
        config = nfc_config(tmp_path, {"device": emulator.path, "debounce": 0, "retry": 0.2})
        with running_daemon(config) as (daemon, cues):
            daemon.table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"])
            daemon.table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
            daemon.table.act({"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
            client = daemon.app.test_client()
            started = client.post("/api/cards/session", json={"game": "spy-team"}, headers=AUTH)
            assert started.status_code == 201

            emulator.present(uid(7), None)  # a blank sticker
            wait_for(lambda: daemon.cards.progress()["position"] == 1)  # type: ignore[index]
            progress = client.get("/api/cards/session", headers=AUTH).get_json()["session"]
            assert progress["last"]["status"] == "enrolled" and progress["last"]["wrote"] is True
            assert progress["current"]["name"] == "Red 2"
            assert emulator.text() == "spy-team/red-1"
            assert daemon.registry.lookup(uid(7)) == "spy-team/red-1"
            assert daemon.table.view()["played"] == []  # the game saw nothing
            enrolled = [c for c in cues if "enroll" in c["data"]]
            assert enrolled[0]["cue"] == "card-accepted" and "1/48: tap Red 2" in enrolled[0]["text"]

            # Session over: the same card now plays, by the card id written on it.
            assert client.delete("/api/cards/session", headers=AUTH).get_json() == {"session": None}
            emulator.lift()
            wait_for(lambda: daemon.readers[0].filter.present is None)  # type: ignore[attr-defined]
            emulator.present(uid(7), "spy-team/red-1")
            wait_for(lambda: daemon.table.view()["played"] == ["spy-team/red-1"])


def test_a_tag_too_small_for_the_card_id_is_enrolled_by_uid_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "cards.db"
    registry = Registry(db)
    for number, card in enumerate(SPY_TEAM.cards):
        if card != "spy-team/red-1":
            registry.register(f"05{number:012x}", card)
    with TagEmulator(free_udp_port()) as emulator:
        # Writable, but 16 bytes: "spy-team/red-1" as a text record needs 21.
        emulator.present(TagSpec(uid(9), None, size=16))
        command = ["cards", "enroll", "--game", "spy-team", "--missing", "--cards-db", str(db)]
        assert main([*command, "--device", emulator.path]) == 0
        assert emulator.text() is None  # nothing written
    assert registry.lookup(uid(9)) == "spy-team/red-1"  # the UID is enough to play it
    assert registry.entry(uid(9)).ndef is False  # type: ignore[union-attr]
    registry.close()
    out = capsys.readouterr().out
    assert (
        "warn: Red 1: UID registered, but the card id could not be written on the tag "
        "(it holds 16 bytes, the card id needs 21); the UID alone is enough to play it." in out
    )


def test_the_tablet_hears_when_the_card_id_could_not_be_written(tmp_path: Path) -> None:
    with TagEmulator(free_udp_port()) as emulator:
        config = nfc_config(tmp_path, {"device": emulator.path, "debounce": 0, "retry": 0.2})
        with running_daemon(config) as (daemon, cues):
            client = daemon.app.test_client()
            assert (
                client.post("/api/cards/session", json={"game": "spy-team"}, headers=AUTH).status_code == 201
            )
            emulator.present(TagSpec(uid(8), None, size=16))
            wait_for(lambda: daemon.cards.progress()["position"] == 1)  # type: ignore[index]
            last = client.get("/api/cards/session", headers=AUTH).get_json()["session"]["last"]
            assert last["status"] == "enrolled" and last["wrote"] is False
            assert (
                last["warning"]
                == "the card id could not be written on the tag (it holds 16 bytes, the card id needs 21)"
            )
            assert "could not be written" in last["message"]
            enrolled = [c for c in cues if "enroll" in c["data"]]
            assert enrolled[0]["data"]["enroll"]["warning"] and "could not be written" in enrolled[0]["text"]
