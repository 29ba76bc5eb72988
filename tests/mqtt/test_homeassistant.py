"""A table as a real Home Assistant sees it (docs/mqtt.md, "Home Assistant").

Everything real: Home Assistant 2024.3.3 (tests/homeassistant.py, its own venv) and Debian's
mosquitto, each started once for the module; `companion run` with `[mqtt] discovery = true` in its
own process, played through the HTTP API, stopped, killed with SIGKILL and started again. What Home
Assistant made of it is read through its own APIs: the device and entity registries over the
websocket API, the states over REST, and its log, which must hold no warning or error.
`pytest -m homeassistant` runs this module alone.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from companion import __version__
from tests.homeassistant import HA_PYTHON, SKIP_REASON, HomeAssistant
from tests.mosquitto import MOSQUITTO, Broker, Listener
from tests.mqtt.test_mqtt import Http, spy_team_game, start_spy_team
from tests.servers import Server, running_companion
from tests.spy_team_play import choose, post

pytestmark = [
    pytest.mark.homeassistant,
    pytest.mark.skipif(not MOSQUITTO, reason="needs Debian's mosquitto (scripts/test installs it)"),
    pytest.mark.skipif(not HA_PYTHON, reason=SKIP_REASON),
]

# What docs/mqtt.md promises: (component, object id) -> the entity's name.
PROMISED = {
    ("sensor", "game"): "Game",
    ("sensor", "status"): "Status",
    ("sensor", "turn"): "Whose turn",
    ("sensor", "announcement"): "Last announcement",
    **{("sensor", f"score_{seat}"): f"Seat {seat} score" for seat in range(1, 6)},
    ("event", "cue"): "Cue",
}
# Home Assistant's own start-up warnings, about this test set-up and not about any payload.
EXPECTED_WARNINGS = (
    "[homeassistant.bootstrap] Skipping pip installation of required modules",
    "[homeassistant.bootstrap] Support for the running Python version 3.11",
)
SECONDS = 5.0  # "within seconds": how long Home Assistant may take to show what the table did


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    running = Broker(tmp_path_factory.mktemp("broker"))
    running.start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def hass(tmp_path_factory: pytest.TempPathFactory, broker: Broker) -> Iterator[HomeAssistant]:
    running = HomeAssistant(tmp_path_factory.mktemp("homeassistant"), broker.port)
    running.start()
    yield running
    running.stop()


@contextmanager
def table(tmp_path: Path, broker: Broker, name: str) -> Iterator[Server]:
    """`companion run` announcing itself to Home Assistant; the same `name` reuses its journal."""
    config = tmp_path / f"{name}.toml"
    config.write_text(f'[mqtt]\nurl = "{broker.url}"\ntable = "{name}"\ndiscovery = true\n')
    with running_companion(tmp_path / name / "journal.db", "--config", str(config)) as server:
        yield server


def device_of(hass: HomeAssistant, name: str) -> list[dict[str, Any]]:
    """The device registry's entries for table `name`."""
    devices = hass.command("config/device_registry/list")
    return [d for d in devices if ["mqtt", f"companion_{name}"] in d["identifiers"]]


def entities_of(hass: HomeAssistant, name: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The entity registry's MQTT entries of table `name`, by (component, object id)."""
    prefix = f"companion_{name}_"
    entries = hass.command("config/entity_registry/list")
    return {
        (e["entity_id"].split(".")[0], e["unique_id"].removeprefix(prefix)): e
        for e in entries
        if e["platform"] == "mqtt" and e["unique_id"].startswith(prefix)
    }


def discovered(hass: HomeAssistant, name: str) -> dict[str, str]:
    """Wait for all of table `name`'s entities; their entity ids by object id."""
    entities = hass.wait(lambda: len(e := entities_of(hass, name)) >= len(PROMISED) and e, "the entities")
    return {key: entry["entity_id"] for (_component, key), entry in entities.items()}


def states_of(hass: HomeAssistant, ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    states = hass.states()
    return {key: states[entity] for key, entity in ids.items() if entity in states}


def shows(hass: HomeAssistant, ids: dict[str, str], **expected: str) -> dict[str, dict[str, Any]] | None:
    """The states, if each of `expected` (object id -> state) is what Home Assistant shows."""
    states = states_of(hass, ids)
    ok = all(key in states and states[key]["state"] == value for key, value in expected.items())
    return states if ok else None


def cues(heard: Listener, name: str) -> list[dict[str, Any]]:
    return [m.json() for m in heard.on(f"companion/{name}/cue")]


def fired_with(
    hass: HomeAssistant, ids: dict[str, str], before: str, expected: dict[str, Any]
) -> dict[str, dict[str, Any]] | None:
    """The states, if the event entity fired since `before` with the `expected` attributes."""
    states = states_of(hass, ids)
    event = states["cue"]
    ok = event["state"] != before and all(event["attributes"].get(k) == v for k, v in expected.items())
    return states if ok else None


def assert_quiet(hass: HomeAssistant) -> None:
    """Home Assistant logged no warning or error but its own start-up ones."""
    lines = [
        line for line in hass.log().splitlines() if line[24:].startswith(("WARNING", "ERROR", "CRITICAL"))
    ]
    assert any(EXPECTED_WARNINGS[0] in line for line in lines), "the log's warnings were not found"
    unexpected = [line for line in lines if not any(known in line for known in EXPECTED_WARNINGS)]
    assert not unexpected, "\n".join(unexpected)


# ---------------------------------------------------------------------------------------- discovery


def test_the_table_is_one_device_with_the_promised_entities(
    hass: HomeAssistant, broker: Broker, tmp_path: Path
) -> None:
    with table(tmp_path, broker, "den"):
        (device,) = hass.wait(lambda: device_of(hass, "den"), "the table's device")
        assert device["name"] == "Table Companion den"
        assert (device["manufacturer"], device["model"], device["sw_version"]) == (
            "Table Companion",
            "card table",
            __version__,
        )
        ids = discovered(hass, "den")
        entities = entities_of(hass, "den")
        assert {key: entry["original_name"] for key, entry in entities.items()} == PROMISED
        assert {entry["device_id"] for entry in entities.values()} == {device["id"]}
        # Before any game: online, no game, nobody's turn, no score.
        states = hass.wait(lambda: shows(hass, ids, game="none", status="idle"), "the idle table")
        assert all(state["state"] != "unavailable" for state in states.values())
        assert states["score_1"]["state"] == "unknown"
        assert states["cue"]["attributes"]["event_types"] == sorted(
            states["cue"]["attributes"]["event_types"]
        )
        assert {"boom", "game-won", "your-turn"} <= set(states["cue"]["attributes"]["event_types"])
    assert_quiet(hass)


# --------------------------------------------------------------------------------- a game, and cues


def test_the_states_follow_a_game_and_a_cue_fires_the_event(
    hass: HomeAssistant, broker: Broker, tmp_path: Path
) -> None:
    heard = Listener(broker, "companion/play/cue")
    with table(tmp_path, broker, "play") as server:
        http = Http(server)
        ids = discovered(hass, "play")
        hass.wait(lambda: shows(hass, ids, status="idle"), "the idle table")
        start_spy_team(http, ["Ann", "Bob", "Cid", "Dee"])
        choose(http, "1/5")
        before = states_of(hass, ids)["cue"]["state"]  # the time of the last event so far
        # The missions' last cue, Ann's turn to lead, heard: the cues from here on are the tap's.
        heard.wait(lambda: (c := cues(heard, "play")) and (c[-1]["cue"], c[-1]["seat"]) == ("your-turn", 0))
        seen = len(cues(heard, "play"))
        post(http, "/api/taps", {"card": "spy-team/red-1"})  # Ann leads: Bob's turn
        states = hass.wait(
            lambda: shows(hass, ids, game="spy-team", status="playing", turn="Bob", score_1="0"),
            "the game being played",
            SECONDS,
        )
        assert states["score_1"]["attributes"]["player"] == "Ann"
        assert states["score_4"]["attributes"]["player"] == "Dee"
        assert states["score_5"]["state"] == "unknown" and states["score_5"]["attributes"]["player"] == ""
        # The tap's last cue, "your turn" for Bob, fires the event entity and is the announcement.
        (cue,) = heard.wait(lambda: [c for c in cues(heard, "play")[seen:] if c["cue"] == "your-turn"])
        assert cue["seat"] == 1 and "Bob" in cue["text"]
        expected = {"event_type": "your-turn", "seat": 1, "text": cue["text"]}
        fired = hass.wait(
            lambda: (s := fired_with(hass, ids, before, expected)) and s, "the cue event", SECONDS
        )
        assert fired["announcement"]["state"] == cue["text"][:255]

        before = fired["cue"]["state"]
        view = spy_team_game(http, ["Ann", "Bob", "Cid", "Dee"])  # a whole game: C.A.T. wins
        scores = {f"score_{seat + 1}": str(p["score"]) for seat, p in enumerate(view["players"])}
        assert scores == {"score_1": "3", "score_2": "0", "score_3": "3", "score_4": "0"}
        hass.wait(lambda: shows(hass, ids, status="game-over", turn="", **scores), "the game's end", SECONDS)
        (won,) = heard.wait(lambda: [c for c in cues(heard, "play") if c["cue"] == "game-won"])
        hass.wait(
            lambda: fired_with(hass, ids, before, {"event_type": "game-won", "text": won["text"]}),
            "the game-won event",
            SECONDS,
        )
    heard.close()
    assert_quiet(hass)


# ------------------------------------------------------------------------------------- availability


def unavailable(hass: HomeAssistant, ids: dict[str, str]) -> bool:
    states = states_of(hass, ids)
    return len(states) == len(ids) and all(s["state"] == "unavailable" for s in states.values())


def available(hass: HomeAssistant, ids: dict[str, str]) -> bool:
    states = states_of(hass, ids)
    return len(states) == len(ids) and all(s["state"] != "unavailable" for s in states.values())


def test_a_stopped_or_killed_table_is_unavailable_until_it_is_back(
    hass: HomeAssistant, broker: Broker, tmp_path: Path
) -> None:
    with table(tmp_path, broker, "roam") as server:
        ids = discovered(hass, "roam")
        hass.wait(lambda: available(hass, ids), "the table online", SECONDS)
        start_spy_team(Http(server), ["Ann", "Bob", "Cid", "Dee"])
        hass.wait(lambda: shows(hass, ids, game="spy-team"), "the game", SECONDS)
    hass.wait(lambda: unavailable(hass, ids), "a stopped table unavailable", SECONDS)  # its "offline"
    with table(tmp_path, broker, "roam") as server:  # the same journal: the game goes on
        hass.wait(lambda: available(hass, ids) and shows(hass, ids, game="spy-team"), "back", SECONDS)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        hass.wait(lambda: unavailable(hass, ids), "a killed table unavailable", SECONDS)  # the will
    with table(tmp_path, broker, "roam"):
        hass.wait(lambda: available(hass, ids) and shows(hass, ids, game="spy-team"), "back", SECONDS)
    assert_quiet(hass)
