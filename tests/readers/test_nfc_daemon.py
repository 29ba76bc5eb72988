"""The whole daemon with nfcpy readers: emulated taps scored in a game and shown on the scoreboard,
unknown tags, seats, and readers that are missing, fail, or are pulled out and plugged back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion.appliance.daemon import Daemon
from tests.nfc_emulator import TagEmulator, uid
from tests.nfc_helpers import (
    AUTH,
    Cable,
    SseClient,
    free_udp_port,
    names,
    nfc_config,
    running_daemon,
    serving,
)
from tests.waiting import wait_for

FAST = {"debounce": 0.2, "retry": 0.2}


def start_spy_team(daemon: Daemon) -> None:
    """A Spy Team game with both missions chosen: the prompt asks seat 0 (Ann) to lead."""
    daemon.table.start("spy-team", ["Ann", "Bob", "Cid", "Dee"])
    daemon.table.act({"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    daemon.table.act({"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    assert daemon.table.view()["prompt"]["seat"] == 0


def played(daemon: Daemon) -> list[str]:
    return list(daemon.table.view()["played"])


def health(daemon: Daemon) -> dict[str, Any]:
    response = daemon.app.test_client().get("/healthz")
    return dict(response.get_json())


def test_an_emulated_tap_is_scored_and_reaches_the_scoreboard(tmp_path: Path) -> None:
    """The full path: a tag on the reader -> nfcpy -> reader -> table -> journal -> SSE client."""
    with TagEmulator(free_udp_port()) as emulator:
        config = nfc_config(tmp_path, {"device": emulator.path, **FAST})
        with running_daemon(config) as (daemon, cues), serving(daemon) as url:
            start_spy_team(daemon)
            scoreboard = SseClient(url)
            try:
                wait_for(lambda: scoreboard.find(lambda kind, data: kind == "state"))  # connected
                emulator.present(uid(1), "spy-team/red-1")
                wait_for(lambda: "spy-team/red-1" in played(daemon))
                emulator.lift()
                emulator.present(uid(2), "spy-team/blue-7")
                wait_for(lambda: "spy-team/blue-7" in played(daemon))

                def shown(card: str) -> Any:
                    return scoreboard.find(
                        lambda kind, data: kind == "state" and card in data.get("played", [])
                    )

                assert wait_for(lambda: shown("spy-team/red-1"))
                assert wait_for(lambda: shown("spy-team/blue-7"))

                def accepted_cards() -> list[dict[str, Any]]:
                    return [c for c in cues if c["cue"] == "card-accepted" and "card" in c["data"]]

                # a card's cue follows its state: wait for the cues themselves
                accepted = wait_for(lambda: len(accepted_cards()) >= 2 and accepted_cards())
                assert [(c["seat"], c["data"]["card"]) for c in accepted] == [
                    (0, "spy-team/red-1"),
                    (1, "spy-team/blue-7"),
                ]
                state = daemon.app.test_client().get("/api/state").get_json()
                assert state["played"] == ["spy-team/red-1", "spy-team/blue-7"]
                assert state["prompt"]["seat"] == 2
                # The journal holds the card ids, not the tags.
                taps = [e.event for e in daemon.journal.entries() if e.event["type"] == "tap"]
                assert taps == [
                    {"type": "tap", "card": "spy-team/red-1"},
                    {"type": "tap", "card": "spy-team/blue-7"},
                ]
            finally:
                scoreboard.close()


def test_an_unknown_tag_cues_its_uid_and_once_enrolled_it_plays(tmp_path: Path) -> None:
    with TagEmulator(free_udp_port()) as emulator:
        config = nfc_config(tmp_path, {"device": emulator.path, **FAST})
        with running_daemon(config) as (daemon, cues):
            start_spy_team(daemon)
            emulator.present(uid(9), ndef=False)  # a read-only sticker, never enrolled
            unknown = wait_for(lambda: [c for c in cues if c["cue"] == "unknown-card"])
            assert unknown[0]["data"] == {"uid": uid(9)}
            assert played(daemon) == []
            assert len(list(daemon.journal.entries())) == 3  # the start and two missions: nothing more
            # The control page's "enroll" button for that UID:
            client = daemon.app.test_client()
            response = client.post(
                "/api/cards/enroll", json={"uid": uid(9), "card": "spy-team/red-5"}, headers=AUTH
            )
            assert response.status_code == 201, response.get_json()
            emulator.lift()
            wait_for(lambda: daemon.readers[0].filter.present is None)
            emulator.present(uid(9), ndef=False)
            wait_for(lambda: played(daemon) == ["spy-team/red-5"])


def test_each_reader_taps_for_its_own_seat(tmp_path: Path) -> None:
    with TagEmulator(free_udp_port()) as seat0, TagEmulator(free_udp_port()) as seat2:
        config = nfc_config(
            tmp_path, {"device": seat0.path, "seat": 0, **FAST}, {"device": seat2.path, "seat": 2, **FAST}
        )
        with running_daemon(config) as (daemon, cues):
            start_spy_team(daemon)
            seat0.present(uid(1), "spy-team/red-1")
            wait_for(lambda: played(daemon) == ["spy-team/red-1"])
            # Bob (seat 1) is next; a card on Cid's reader (seat 2) is refused with an error cue.
            seat2.present(uid(2), "spy-team/red-2")
            refused = wait_for(lambda: [c for c in cues if c["cue"] == "error"])
            assert "Bob" in refused[0]["text"]
            assert played(daemon) == ["spy-team/red-1"]
            assert [r["seat"] for r in health(daemon)["readers"]] == [0, 2]


@pytest.mark.parametrize(
    "device",
    ["udp:255.255.255.255:{port}", "usb:ffff:ffff", "tty:S99:pn532"],
    ids=["io-error-on-connect", "no-usb-device", "no-serial-port"],
)
def test_a_reader_that_fails_is_reported_and_the_daemon_runs_on(tmp_path: Path, device: str) -> None:
    """Real failures of the real stack: nfcpy's connect returns False on an I/O error (a UDP send
    the kernel refuses), open finds no device. The daemon keeps serving; /healthz says so."""
    path = device.format(port=free_udp_port())
    config = nfc_config(tmp_path, {"device": path, **FAST})
    with running_daemon(config) as (daemon, cues):
        # The cue, not `"reader": "lost"`: a reader still opening is not connected yet either.
        wait_for(lambda: "reader-lost" in names(cues))
        status = health(daemon)["readers"][0]
        assert status["connected"] is False and status["device"] == path and status["error"]
        # The daemon goes on: a game starts, the control API works.
        start_spy_team(daemon)
        client = daemon.app.test_client()
        assert client.get("/api/state").get_json()["game"] == "spy-team"
        # It keeps retrying (every 0.2 s here) and announces the loss once, not at every attempt.
        wait_for(lambda: status["opens"] + 3 <= health(daemon)["readers"][0]["opens"])
        assert names(cues).count("reader-lost") == 1
        assert "reader-back" not in names(cues)
        assert health(daemon)["reader"] == "lost"


def test_a_reader_pulled_out_and_plugged_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lost, then back: no tap lost, none doubled. The card lying on the reader before the cable is
    pulled is not counted again when the reader comes back; a card put on it since is counted once."""
    cable = Cable(monkeypatch)
    with TagEmulator(free_udp_port()) as emulator:
        config = nfc_config(tmp_path, {"device": emulator.path, **FAST})
        with running_daemon(config) as (daemon, cues):
            start_spy_team(daemon)
            emulator.present(uid(1), "spy-team/red-1")
            wait_for(lambda: played(daemon) == ["spy-team/red-1"])

            cable.unplug()  # while red-1 lies on the reader
            wait_for(lambda: "reader-lost" in names(cues))
            lost = next(c for c in cues if c["cue"] == "reader-lost")
            assert lost["data"]["device"] == emulator.path
            assert health(daemon)["reader"] == "lost"
            assert daemon.app.test_client().get("/healthz").status_code in (200, 503)
            cable.plug()
            wait_for(lambda: "reader-back" in names(cues))
            assert health(daemon)["reader"] == "ok"
            reader = daemon.readers[0]
            wait_for(lambda: reader.status()["reads"] >= 2)  # red-1 read again after the outage...
            assert played(daemon) == ["spy-team/red-1"]  # ...and not played twice

            cable.unplug()
            wait_for(lambda: names(cues).count("reader-lost") == 2)
            emulator.present(uid(2), "spy-team/blue-2")  # swapped while the reader is away
            cable.plug()
            wait_for(lambda: played(daemon) == ["spy-team/red-1", "spy-team/blue-2"])
            wait_for(lambda: names(cues).count("reader-back") == 2)

            def blue() -> list[dict[str, Any]]:
                return [
                    c
                    for c in cues
                    if c["cue"] == "card-accepted" and c["data"].get("card") == "spy-team/blue-2"
                ]

            wait_for(blue)  # its cue follows its state
            assert len(blue()) == 1  # blue-2 once


def test_the_emulator_stopped_and_restarted(tmp_path: Path) -> None:
    """With nfcpy's UDP driver the far end going silent is a card lifted, not a reader lost: the
    reader's socket never fails. The daemon carries on; the restarted tag is a new tap."""
    port = free_udp_port()
    emulator = TagEmulator(port)
    try:
        config = nfc_config(tmp_path, {"device": emulator.path, **FAST})
        with running_daemon(config) as (daemon, cues):
            start_spy_team(daemon)
            emulator.present(uid(1), "spy-team/red-1")
            wait_for(lambda: played(daemon) == ["spy-team/red-1"])
            emulator.close()  # the process is gone
            reader = daemon.readers[0]
            wait_for(lambda: reader.filter.present is None)
            assert health(daemon)["reader"] == "ok"
            emulator = TagEmulator(port)
            emulator.present(uid(2), "spy-team/blue-2")
            wait_for(lambda: played(daemon) == ["spy-team/red-1", "spy-team/blue-2"])
            assert "reader-lost" not in names(cues)
    finally:
        emulator.close()
