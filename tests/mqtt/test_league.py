"""The pieces of the league without a broker: [mqtt] settings, results read off a view, the outbox,
the league's store and standings, and its page and API (the broker tests are in test_mqtt.py)."""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import Any

import pytest
from waitress.server import create_server

from companion.core.config import ConfigError, load_config, parse_mqtt
from companion.mqtt.league import LeagueStore, create_league_app, league_json
from companion.mqtt.outbox import Outbox
from companion.mqtt.results import result_id, results_of, retraction
from companion.table.entries import Entry

START = Entry(7, "2026-11-30T20:15:02.120+00:00", {"type": "start", "game": "spy-team"})
GAME = "2026-11-30T20:15:02.120+00:00#7"


def view(rounds: int, over: bool = False) -> dict[str, Any]:
    """A Spy Team view after `rounds` rounds won by seats 0 and 2."""
    return {
        "game": "spy-team",
        "status": "game-over" if over else "playing",
        "round": rounds + 1,
        "players": [{"seat": s, "name": n, "score": rounds * (s % 2 == 0)} for s, n in enumerate("ABCD")],
        "prompt": {"seat": 0},
        "rounds": [{"round": r, "winners": [0, 2], "reason": "sabotage"} for r in range(1, rounds + 1)],
        "winners": [0, 2] if over else [],
    }


# ----------------------------------------------------------------------------------------- settings


def test_mqtt_settings_from_the_config_file(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not checked here")
    path = tmp_path / "c.toml"
    path.write_text(
        f'[mqtt]\nurl = "mqtts://broker.lan"\nca_file = "{ca}"\ntable = "t-1"\npassword = "file"\n'
    )
    settings = load_config(path, env={"COMPANION_MQTT_PASSWORD": "env"}).mqtt
    assert settings is not None
    assert (settings.host, settings.port, settings.tls, settings.ca_file) == (
        "broker.lan",
        8883,
        True,
        str(ca),
    )
    assert (settings.table, settings.base, settings.password, settings.topic) == (
        "t-1",
        "companion",
        "env",
        "companion/t-1",
    )
    assert not settings.discovery
    assert load_config(None, env={}).mqtt is None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"table": "x"}, "needs a 'url'"),
        ({"url": "http://broker"}, "must look like mqtt://"),
        ({"url": "mqtt://broker:99999"}, "bad port"),
        ({"url": "mqtt://b", "table": "a/b"}, "table must be"),
        ({"url": "mqtt://b", "base": "club/#"}, "base must be"),
        ({"url": "mqtt://b", "ca_file": "/no/such.pem"}, "not a readable file"),
        ({"url": "mqtt://b", "discovery": "yes"}, "true or false"),
        ({"url": "mqtt://b", "topic": "x"}, "unknown keys: topic"),
    ],
)
def test_a_bad_mqtt_setting_is_named(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_mqtt(raw, {})


def test_the_table_defaults_to_the_hostname_made_topic_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("socket.gethostname", lambda: "pi.club+1")
    settings = parse_mqtt({"url": "mqtt://b"}, {})
    assert settings is not None and settings.table == "pi-club-1" and settings.port == 1883


# ------------------------------------------------------------------------------------------ results


def test_results_are_read_off_the_view_with_stable_ids() -> None:
    assert results_of("t", START, view(0)) == {}
    two = results_of("t", START, view(2))
    assert list(two) == [f"t/{GAME}/round-1", f"t/{GAME}/round-2"]
    assert two[result_id("t", GAME, 1)]["winners"] == [0, 2]
    assert results_of("t", START, view(2)) == two  # the same view, the same results
    over = results_of("t", START, view(3, over=True))
    game = over[f"t/{GAME}/game"]
    assert game["kind"] == "game" and game["winners"] == [0, 2] and game["players"][0]["score"] == 3
    assert results_of("t", None, view(1)) == {}  # no game in force


def test_a_result_leaves_out_what_the_view_does_not_show() -> None:
    hidden = view(1)
    hidden["players"][0]["hand"] = [
        "spy-team/red-7"
    ]  # were a view ever to carry more than a seat's public face
    result = next(iter(results_of("t", START, hidden).values()))
    assert set(result["players"][0]) == {"seat", "name"}
    assert retraction(result) == {k: result[k] for k in retraction(result) if k != "retracted"} | {
        "retracted": True
    }


# ------------------------------------------------------------------------------------------- outbox


def test_the_outbox_keeps_versions_until_each_is_acknowledged(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "outbox.db")
    first = {"id": "a", "game_id": "g", "n": 1}
    outbox.put([first])
    outbox.put([first])  # the same again: nothing new to send
    [pending] = outbox.pending()
    changed = {**first, "n": 2}
    outbox.put([changed])  # changed (an undo and a replay) before the broker acknowledged it
    outbox.sent(pending.id, pending.version)  # the old version's acknowledgement
    [newer] = outbox.pending()
    assert newer.payload == changed and newer.version == pending.version + 1
    outbox.sent(newer.id, newer.version)
    assert outbox.pending() == [] and outbox.of_game("g") == {"a": changed}
    outbox.close()
    assert Outbox(tmp_path / "outbox.db").of_game("g") == {"a": changed}  # on disk


# ------------------------------------------------------------------------------------------- league


def test_the_league_counts_each_result_once_and_forgets_a_retracted_one(tmp_path: Path) -> None:
    store = LeagueStore(tmp_path / "league.db")
    results = results_of("left", START, view(3, over=True))
    for result in [*results.values(), *results.values()]:  # every message twice
        store.record(copy.deepcopy(result))
    other = Entry(3, "2026-12-01T20:00:00+00:00", {})
    late = results_of("right", other, view(3, over=True))
    for result in late.values():
        store.record(result)
    store.record(retraction(late[result_id("right", f"{other.at}#3", None)]))  # that game was undone
    assert len(store.results()) == 4 + 3
    league = league_json(store, titles={"spy-team": "Spy Team"})
    [spy_team] = league["standings"]
    assert spy_team["title"] == "Spy Team" and spy_team["games"] == 1
    assert [(p["player"], p["played"], p["won"], p["points"]) for p in spy_team["players"]] == [
        ("A", 1, 1, 3),
        ("C", 1, 1, 3),
        ("B", 1, 0, 0),
        ("D", 1, 0, 0),
    ]
    assert league["nights"] == [{"night": league["nights"][0]["night"], "games": 1}]
    assert league_json(store, night="1999-01-01")["standings"] == []


def test_tables_show_presence_and_what_they_play(tmp_path: Path) -> None:
    store = LeagueStore(tmp_path / "league.db")
    store.table("left", state=view(1))
    store.table("left", status="online")
    store.table("right", status="offline")
    tables = {t["table"]: t for t in league_json(store)["tables"]}
    assert tables["left"]["online"] and tables["left"]["game"] == "spy-team" and tables["left"]["round"] == 2
    assert tables["left"]["players"][0] == {"name": "A", "score": 1}
    assert not tables["right"]["online"] and tables["right"]["game"] is None


def test_the_league_page_and_api_are_read_only(tmp_path: Path) -> None:
    store = LeagueStore(tmp_path / "league.db")
    client = create_league_app(store).test_client()
    page = client.get("/")
    assert page.status_code == 200 and b"/static/js/league.js" in page.data
    assert client.get("/static/js/league.js").status_code == 200
    assert client.get("/api/league").get_json()["standings"] == []
    assert client.post("/api/league").status_code == 405


@pytest.mark.parametrize(("width", "height"), [(360, 740), (390, 844), (800, 1280), (1280, 800)])
def test_the_league_page_fits_phones_and_tablets(
    tmp_path: Path, browser: Any, width: int, height: int
) -> None:
    """Debian's Chromium on a real server: the tables, the standings and the last games, with no
    sideways scrolling from a small phone to a tablet in landscape."""
    store = LeagueStore(tmp_path / "league.db")
    for result in results_of("left", START, view(3, over=True)).values():
        store.record(result)
    store.table("left", status="online", state=view(1))
    store.table("a-table-with-a-rather-long-name", status="offline")
    server = create_server(create_league_app(store, {"spy-team": "Spy Team"}), host="127.0.0.1", port=0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"http://127.0.0.1:{server.effective_port}/")
        page.wait_for_selector(".game .standing tbody tr")
        rows = page.locator(".game .standing tbody tr").all_inner_texts()
        assert [row.split()[0] for row in rows] == ["A", "C", "B", "D"]
        assert "Spy Team" in page.locator(".game[data-game='spy-team'] h3").inner_text()
        assert page.locator(".table.online h3").inner_text().startswith("left")
        assert page.locator(".table:not(.online)").count() == 1
        assert "A & C won" in page.locator("#recent").inner_text()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.close()
    finally:
        server.close()
