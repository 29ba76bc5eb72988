"""Tables on a real Mosquitto broker, and `companion league` reading them (docs/mqtt.md).

Everything real: Debian's mosquitto on a free loopback port, `companion run` and `companion league`
in their own processes, games played through the HTTP API, the broker stopped mid-game, a table
killed with SIGKILL with a result not yet published. Here Home Assistant's discovery payloads are
checked against the keys its documentation lists, and their templates rendered with Jinja (what
Home Assistant's templates are) against the messages the table sent; test_homeassistant.py runs a
real Home Assistant on them.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jinja2
import pytest

from companion.appliance.daemon import Daemon
from companion.core.config import Config, MqttSettings
from companion.core.cues import CUE_NAMES
from companion.mqtt.league import LeagueStore
from tests.conftest import AUTH, TOKEN
from tests.mosquitto import MOSQUITTO, Broker, Listener
from tests.servers import Server, free_port, running_companion
from tests.spy_team_play import choose, sabotage_round
from tests.web import test_peanuts_api as peanuts

pytestmark = pytest.mark.skipif(not MOSQUITTO, reason="needs Debian's mosquitto (scripts/test installs it)")

SPY_TEAM = "spy-team"


class Answer:
    def __init__(self, status: int, body: Any) -> None:
        self.status_code, self._body = status, body

    def get_json(self) -> Any:
        return self._body


class Http:
    """The Flask test client's two calls, over HTTP to a real server, so the scripted games of
    tests/spy_team_play.py play on a `companion run` in another process."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def post(self, path: str, json: Any = None, headers: Any = None) -> Answer:
        return Answer(200, self.server.call("POST", path, json))

    def get(self, path: str) -> Answer:
        with urllib.request.urlopen(self.server.url + path, timeout=10) as response:
            return Answer(response.status, json.load(response))


def start_spy_team(http: Http, players: list[str]) -> None:
    http.post("/api/games", {"game": SPY_TEAM, "players": players, "options": {"start": 0}})


def spy_team_game(http: Http, players: list[str]) -> dict[str, Any]:
    """Three sabotaged rounds: seats 0 and 2 (C.A.T.) win, 3 points each."""
    start_spy_team(http, players)
    view: dict[str, Any] = {}
    for tile in ("1/5", "2/4", "3/3"):
        view = sabotage_round(http, tile)
    assert view["status"] == "game-over" and view["winners"] == [0, 2]
    return view


def spy_game(http: Http) -> None:
    """Two players of SPY; Bob (seat 1) wins (the game of tests/web/test_spy_api.py)."""
    http.post("/api/games", {"game": "spy", "players": ["Ann", "Bob"], "options": {"start": 1}})
    for card in ("green-spy", "red-spy", "green-top-secret-2", "red-bomb-2-extra", "green-safe-1"):
        http.post("/api/taps", {"card": f"spy/{card}"})
    http.post("/api/actions", {"type": "pass"})
    for card in ("green-bomb-1", "red-bomb-2-extra"):
        view = http.post("/api/taps", {"card": f"spy/{card}"}).get_json()
    assert view["status"] == "game-over" and view["winners"] == [1]


@contextmanager
def table(tmp_path: Path, broker: Broker, name: str, db: Path | None = None) -> Iterator[Server]:
    config = tmp_path / f"{name}.toml"
    config.write_text(f'[mqtt]\nurl = "{broker.url}"\ntable = "{name}"\n')
    with running_companion(db or tmp_path / name / "journal.db", "--config", str(config)) as server:
        yield server


@contextmanager
def league(tmp_path: Path, broker: Broker) -> Iterator[str]:
    """`companion league` in its own process; yields its URL."""
    port = free_port()
    command = [sys.executable, "-m", "companion.appliance.cli", "league", "--mqtt", broker.url]
    command += ["--db", str(tmp_path / "league.db"), "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait(lambda: get_league(url) is not None, "the league to answer")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def get_league(url: str) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(url + "/api/league", timeout=2) as response:
            return dict(json.load(response))
    except OSError:
        return None


def wait(check: Any, what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def standings(league_view: dict[str, Any]) -> dict[str, dict[str, tuple[int, int, int]]]:
    """{game: {player: (played, won, points)}}"""
    return {
        entry["game"]: {p["player"]: (p["played"], p["won"], p["points"]) for p in entry["players"]}
        for entry in league_view["standings"]
    }


def stored_results(tmp_path: Path) -> list[str]:
    with sqlite3.connect(tmp_path / "league.db") as db:
        return sorted(row[0] for row in db.execute("SELECT id FROM results"))


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    running = Broker(tmp_path / "broker")
    running.start()
    yield running
    running.stop()


# ------------------------------------------------------------------------------------ a league night


def test_two_tables_and_a_league_through_a_broker_restart(tmp_path: Path, broker: Broker) -> None:
    heard = Listener(broker, "companion/#")
    with league(tmp_path, broker) as url:
        with table(tmp_path, broker, "left") as left, table(tmp_path, broker, "right") as right:
            a, b = Http(left), Http(right)
            start_spy_team(a, ["Ann", "Bob", "Cid", "Dee"])
            sabotage_round(a, "1/5")
            broker.stop()  # mid-game: the tables play on, their results wait in the outbox
            sabotage_round(a, "2/4")
            broker.start()
            sabotage_round(a, "3/3")
            spy_team_game(b, ["Bob", "Ann", "Eve", "Fay"])
            spy_game(b)
            expected = {
                SPY_TEAM: {
                    "Ann": (2, 1, 3),
                    "Bob": (2, 1, 3),
                    "Cid": (1, 1, 3),
                    "Eve": (1, 1, 3),
                    "Dee": (1, 0, 0),
                    "Fay": (1, 0, 0),
                },
                "spy": {"Bob": (1, 1, 1), "Ann": (1, 0, 0)},
            }
            view = wait(lambda: (v := get_league(url)) and standings(v) == expected and v, "the standings")
            tables = {t["table"]: t for t in view["tables"]}
            assert tables["left"]["online"] and tables["right"]["online"]
            assert (tables["left"]["game"], tables["right"]["game"]) == (SPY_TEAM, "spy")
            assert [p["name"] for p in tables["right"]["players"]] == ["Ann", "Bob"]
            assert view["standings"][1]["title"] == "Spy Team" and view["standings"][1]["games"] == 2
            # Exactly once each: 3 rounds and 1 game at each Spy Team table, 1 game of SPY.
            assert len(stored_results(tmp_path)) == 9
            assert_only_public_topics(heard, broker, a, b)
            right.process.send_signal(signal.SIGKILL)  # a crash: the broker tells the last will
            wait(lambda: not table_online(url, "right"), "the right table's last will")
        wait(lambda: not table_online(url, "left"), "the left table's clean offline")
    heard.close()


def table_online(url: str, name: str) -> bool:
    view = get_league(url) or {"tables": []}
    return any(t["online"] for t in view["tables"] if t["table"] == name)


def assert_only_public_topics(heard: Listener, broker: Broker, *tables: Http) -> None:
    """A table puts only its four topics on the air; the retained state is the API's public view and
    a cue is the scoreboard's cue, field for field."""

    def topics() -> set[str]:
        return {m.topic.split("/", 2)[2] for m in heard.on_prefix("companion/")}

    # Waits for the four: a result may reach this listener after the league (it comes back from the
    # broker's restart on its own), never before the broker has it.
    heard.wait(lambda: topics() >= {"state", "cue", "result", "status"})
    assert topics() == {"state", "cue", "result", "status"}
    newcomer = Listener(broker, "companion/+/state")  # gets the retained states at once
    for name, http in zip(("left", "right"), tables, strict=True):
        state = newcomer.wait(lambda name=name: newcomer.on(f"companion/{name}/state"))[-1]
        assert state.retain and state.json() == http.get("/api/state").get_json()
    newcomer.close()
    for cue in heard.on("companion/left/cue"):
        assert set(cue.json()) == {"cue", "seat", "text", "data"} and cue.json()["cue"] in CUE_NAMES
    for result in heard.on("companion/left/result"):
        assert result.qos == 1 and set(result.json()) <= RESULT_KEYS


RESULT_KEYS = {
    "id",
    "kind",
    "table",
    "game",
    "game_id",
    "started_at",
    "players",
    "round",
    "winners",
    "detail",
}


# --------------------------------------------------------------------------------- nothing is lost


def test_a_result_outlives_a_kill_9_before_it_was_published(tmp_path: Path, broker: Broker) -> None:
    db = tmp_path / "solo" / "journal.db"
    with league(tmp_path, broker) as url:
        with table(tmp_path, broker, "solo", db) as solo:
            start_spy_team(Http(solo), ["Ann", "Bob", "Cid", "Dee"])
            broker.stop()
            sabotage_round(Http(solo), "1/5")  # the round ends with no broker to tell
            assert pending(db) == 1  # on disk, not sent
            solo.process.send_signal(signal.SIGKILL)
            solo.process.wait()
        broker.start()
        with table(tmp_path, broker, "solo", db) as solo:
            wait(lambda: len(stored_results(tmp_path)) == 1, "the round the kill held back")
            sabotage_round(Http(solo), "2/4")
            wait(lambda: len(stored_results(tmp_path)) == 2, "round 2")
            solo.process.send_signal(signal.SIGKILL)
            solo.process.wait()
        for leftover in db.parent.glob("outbox.db*"):  # as if killed before the outbox was written
            leftover.unlink()
        with table(tmp_path, broker, "solo", db) as solo:
            sabotage_round(Http(solo), "3/3")
            view = wait(lambda: (v := get_league(url)) and v["standings"] and v, "the game")
        assert standings(view) == {
            SPY_TEAM: {"Ann": (1, 1, 3), "Cid": (1, 1, 3), "Bob": (1, 0, 0), "Dee": (1, 0, 0)}
        }
        ids = stored_results(tmp_path)
        assert len(ids) == 4 and len({i.rsplit("/", 1)[0] for i in ids}) == 1  # one game, 3 rounds + it


def pending(db: Path) -> int:
    with sqlite3.connect(db.with_name("outbox.db")) as outbox:
        return int(outbox.execute("SELECT count(*) FROM results WHERE sent = 0").fetchone()[0])


# ----------------------------------------------------------------------- undo, and Home Assistant


@pytest.fixture
def daemon_on_broker(tmp_path: Path, broker: Broker) -> Iterator[Daemon]:
    settings = MqttSettings(host="127.0.0.1", port=broker.port, table="den", discovery=True)
    config = Config(token=TOKEN, db=tmp_path / "journal.db", readers=[{"device": "virtual"}], mock_pins=True)
    config.mqtt = settings
    running = Daemon(config)
    running.start()
    yield running
    running.close()


def test_an_undone_round_is_retracted(daemon_on_broker: Daemon, broker: Broker, tmp_path: Path) -> None:
    heard = Listener(broker, "companion/den/result")
    client = daemon_on_broker.app.test_client()
    client.post("/api/games", json={"game": SPY_TEAM, "players": ["A", "B", "C", "D"]}, headers=AUTH)
    sabotage_round(client, "1/5")
    round_one = heard.wait(lambda: heard.on("companion/den/result"))[0].json()
    assert (round_one["kind"], round_one["round"], round_one["winners"]) == ("round", 1, [0, 2])
    client.post("/api/undo", headers=AUTH)  # the last trick taken back: round 1 is not over after all
    retracted = heard.wait(
        lambda: [m.json() for m in heard.on("companion/den/result") if m.json().get("retracted")]
    )
    assert retracted[0]["id"] == round_one["id"]
    store = LeagueStore(tmp_path / "league.db")  # what a league makes of the two messages
    for message in heard.on("companion/den/result"):
        store.record(message.json())
    assert store.results() == []
    heard.close()


def test_a_broker_that_hangs_never_holds_up_the_table(daemon_on_broker: Daemon, broker: Broker) -> None:
    """The broker frozen (SIGSTOP: it accepts nothing, answers nothing): a whole round is played as
    if it were not there; once it thaws, the round's result arrives."""
    heard = Listener(broker, "companion/den/result")
    client = daemon_on_broker.app.test_client()
    assert broker.process is not None
    broker.process.send_signal(signal.SIGSTOP)
    try:
        played = threading.Thread(target=lambda: play_round(client), daemon=True)
        played.start()
        played.join(timeout=30)
        assert not played.is_alive(), "the table waited for a frozen broker"
        assert client.get("/api/state").get_json()["rounds"][0]["winners"] == [0, 2]
    finally:
        broker.process.send_signal(signal.SIGCONT)
    assert heard.wait(lambda: heard.on("companion/den/result"))[0].json()["round"] == 1
    heard.close()


def play_round(client: Any) -> None:
    client.post("/api/games", json={"game": SPY_TEAM, "players": ["A", "B", "C", "D"]}, headers=AUTH)
    sabotage_round(client, "1/5")


# Home Assistant's documented configuration keys (home-assistant.io, integrations/sensor.mqtt and
# integrations/event.mqtt, "Configuration Variables"), the ones common to both and the event's own.
HA_COMMON = {
    "availability", "availability_mode", "availability_template", "availability_topic", "device",
    "device_class", "enabled_by_default", "encoding", "entity_category", "icon", "json_attributes_template",
    "json_attributes_topic", "name", "object_id", "payload_available", "payload_not_available", "qos",
    "state_topic", "unique_id", "value_template",
}  # fmt: skip
HA_SENSOR = HA_COMMON | {
    "expire_after",
    "force_update",
    "last_reset_value_template",
    "state_class",
    "unit_of_measurement",
}
HA_EVENT = HA_COMMON | {"event_types"}
HA_DEVICE = {
    "configuration_url", "connections", "hw_version", "identifiers", "manufacturer", "model", "name",
    "suggested_area", "sw_version", "via_device",
}  # fmt: skip


def test_home_assistant_discovers_one_device_whose_templates_read_the_table(
    daemon_on_broker: Daemon, broker: Broker
) -> None:
    heard = Listener(broker, "homeassistant/#", "companion/den/#")
    count = len(
        heard.wait(lambda: len(heard.on_prefix("homeassistant/")) >= 10 and heard.on_prefix("homeassistant/"))
    )
    later = Listener(broker, "homeassistant/#")  # Home Assistant starting later: the configs are retained
    configs = later.wait(lambda: len(later.messages) == count and later.messages)
    later.close()
    by_component: dict[str, list[dict[str, Any]]] = {}
    for message in configs:
        prefix, component, node, _entity, leaf = message.topic.split("/")
        assert (prefix, node, leaf, message.retain) == ("homeassistant", "companion_den", "config", True)
        by_component.setdefault(component, []).append(message.json())
    sensors, events = by_component.pop("sensor"), by_component.pop("event")
    assert not by_component
    for config in sensors:
        assert set(config) <= HA_SENSOR and {"state_topic", "unique_id", "name"} <= set(config)
    for config in events:
        assert set(config) <= HA_EVENT and {"state_topic", "event_types", "unique_id"} <= set(config)
    everything = sensors + events
    assert all(
        set(c["device"]) <= HA_DEVICE and c["device"]["identifiers"] == ["companion_den"] for c in everything
    )
    assert len({c["unique_id"] for c in everything}) == len(everything)  # one entity each
    assert {c["availability_topic"] for c in everything} == {"companion/den/status"}

    # The templates, rendered as Home Assistant would, on what the table really sent.
    client = daemon_on_broker.app.test_client()
    client.post("/api/games", json={"game": SPY_TEAM, "players": ["Ann", "Bob", "Cid", "Dee"]}, headers=AUTH)
    choose(client, "1/5")
    client.post("/api/taps", json={"card": "spy-team/red-1"}, headers=AUTH)  # Ann leads: Bob's turn
    state = heard.wait(
        lambda: [m for m in heard.on("companion/den/state") if m.json()["prompt"]["seat"] == 1]
    )[-1]
    cue = heard.wait(lambda: heard.on("companion/den/cue"))[-1]
    values = {}
    for config in sensors:
        message = state if config["state_topic"].endswith("/state") else cue
        values[config["unique_id"]] = render(config["value_template"], message.json())
    assert values["companion_den_game"] == SPY_TEAM
    assert values["companion_den_status"] == "playing"
    assert values["companion_den_turn"] == "Bob"
    assert values["companion_den_score_1"] == "0" and values["companion_den_score_5"] == "unknown"
    assert values["companion_den_announcement"] == cue.json()["text"]
    score_1 = next(c for c in sensors if c["unique_id"] == "companion_den_score_1")
    assert json.loads(render(score_1["json_attributes_template"], state.json())) == {"player": "Ann"}
    event = json.loads(render(events[0]["value_template"], cue.json()))
    assert event["event_type"] == cue.json()["cue"] and event["event_type"] in events[0]["event_types"]
    heard.close()


def render(template: str, payload: Any) -> str:
    return jinja2.Environment().from_string(template).render(value_json=payload)


def test_no_face_down_card_reaches_the_broker(daemon_on_broker: Daemon, broker: Broker) -> None:
    """The Mission for Peanuts round of test_peanuts_api.py, whose Informants stay face down: nothing
    the table sends (states, cues with refusals among them, the round's result) names them."""
    heard = Listener(broker, "companion/den/#")
    client = daemon_on_broker.app.test_client()
    peanuts.start(client, ["Ann", "Bob", "Cy"])
    for step, status in peanuts.face_down_round():
        peanuts.send(client, step, status)
    result = heard.wait(lambda: heard.on("companion/den/result"))[0].json()
    assert (result["round"], result["winners"], result["game"]) == (1, [1], "peanuts")
    heard.wait(lambda: heard.on("companion/den/state")[-1].json() == client.get("/api/state").get_json())
    # An input's cues go out after its state: wait for the cues themselves, not for the last state.
    heard.wait(
        lambda: (
            {"error", "shuffle-in", "round-won"} <= {m.json()["cue"] for m in heard.on("companion/den/cue")}
        )
    )
    text = "\n".join(m.payload.decode() for m in heard.messages)
    for card in peanuts.FACE_DOWN:
        assert card not in text
    assert "informant" not in text.lower()
    for message in heard.on("companion/den/state"):
        assert not peanuts.shown_cards(message.json()) & set(peanuts.FACE_DOWN)
    heard.close()


def test_the_table_says_offline_when_it_stops(tmp_path: Path, broker: Broker) -> None:
    heard = Listener(broker, "companion/+/status")
    with table(tmp_path, broker, "brief"):
        heard.wait(lambda: [m for m in heard.on("companion/brief/status") if m.payload == b"online"])
    heard.wait(lambda: heard.on("companion/brief/status")[-1].payload == b"offline")
    heard.close()
    newcomer = Listener(broker, "companion/brief/status")  # what anyone subscribing later is told
    assert newcomer.wait(lambda: newcomer.on("companion/brief/status"))[0].retain
    assert newcomer.on("companion/brief/status")[-1].payload == b"offline"
    newcomer.close()


def test_a_table_without_a_broker_plays_on(tmp_path: Path) -> None:
    """No broker at all (nothing listens on the port): the table starts, plays, and keeps the result."""
    config = tmp_path / "away.toml"
    config.write_text(f'[mqtt]\nurl = "mqtt://127.0.0.1:{free_port()}"\ntable = "away"\n')
    with running_companion(tmp_path / "journal.db", "--config", str(config)) as server:
        http = Http(server)
        start_spy_team(http, ["Ann", "Bob", "Cid", "Dee"])
        sabotage_round(http, "1/5")
        health = http.get("/healthz").get_json()
        assert health["ok"] and health["mqtt"] == "away"
    assert pending(tmp_path / "journal.db") == 1
    assert os.path.getsize(tmp_path / "outbox.db") > 0
