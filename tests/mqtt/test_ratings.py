"""The league's ratings (companion/mqtt/ratings.py) on a recorded league night: two tables' results
as the broker carried them (tests/mqtt/league_night.json: one repeated, two late), through a real
Mosquitto into `companion league` in its own process, and through the store in other orders. Every
figure is checked against openskill called here, on matches written out by hand from the games."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from openskill.models import PlackettLuce
from waitress.server import create_server

from companion.games.catalog import load_catalog
from companion.mqtt.league import LeagueStore, create_league_app, league_json
from companion.mqtt.ratings import Match, match_of, ratings
from companion.mqtt.results import results_of
from companion.table.entries import Entry
from tests.mosquitto import MOSQUITTO, Broker
from tests.servers import free_port
from tests.waiting import wait_for

NIGHT = json.loads((Path(__file__).parent / "league_night.json").read_text())["messages"]
TITLES = {game: data.title for game, data in load_catalog().items()}  # what `companion league` shows

# The night's games in the order they were played (UTC), as sides and ranks read by hand off each
# result: Spy Team's winning pair against the other pair; SPY's winner first, the rest tied;
# Peanuts by Peanut Points, equal points tied. Names in lower case: one player whatever the case.
PLAYED = [
    ("spy-team", [["bob", "dee"], ["cid", "ann"]], [2, 1]),  # left 20:00: Ann & Cid win
    ("spy", [["eve"], ["ann"], ["bob"]], [1, 2, 2]),  # right 21:02+01:00 = 20:02: Eve wins
    ("peanuts", [["eve"], ["ann"], ["bob"], ["cid"], ["dee"]], [2, 1, 3, 3, 4]),  # left 20:40: Ann 3 points
    ("spy-team", [["eve", "bob"], ["dee", "ann"]], [2, 1]),  # right 21:45+01:00 = 20:45: Dee & Ann win
    ("spy", [["dee"], ["cid"]], [2, 1]),  # left 21:30: Cid wins
    ("peanuts", [["cid"], ["eve"], ["dee"]], [1, 2, 2]),  # a week later, right 19:10 UTC: Cid wins
    ("spy-team", [["ann", "cid"], ["eve", "bob"]], [2, 1]),  # left 19:30: Eve & Bob win
]
FIRST_NIGHT = 5  # games on 2026-11-30


def expected(played: list[tuple[str, list[list[str]], list[int]]], game: str | None) -> dict[str, Any]:
    """{(player, "rating" | "mu" | "sigma" | "played"): value}, as openskill rates the games of
    `game` (None: all of them)."""
    model = PlackettLuce()
    table: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for name, teams, ranks in played:
        if game is not None and name != game:
            continue
        rated = model.rate([[table.get(p) or model.rating() for p in team] for team in teams], ranks=ranks)
        for team, new in zip(teams, rated, strict=True):
            for player, rating in zip(team, new, strict=True):
                table[player] = rating
                counts[player] = counts.get(player, 0) + 1
    return (
        {(p, "rating"): r.ordinal() for p, r in table.items()}
        | {(p, what): value for p, r in table.items() for what, value in (("mu", r.mu), ("sigma", r.sigma))}
        | {(p, "played"): n for p, n in counts.items()}
    )


def shown(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        (r["player"].casefold(), what): r[what] for r in rows for what in ("rating", "mu", "sigma", "played")
    }


def assert_rated_as_openskill(rated: dict[str, Any], played: list[Any]) -> None:
    overall = rated["overall"]
    assert overall["games"] == len(played)
    assert shown(overall["players"]) == pytest.approx(expected(played, None), rel=1e-12)
    ratings_shown = [r["rating"] for r in overall["players"]]
    assert ratings_shown == sorted(ratings_shown, reverse=True)  # best first
    games = {entry["game"]: entry for entry in rated["games"]}
    assert set(games) == {game for game, _, _ in played}
    for game, entry in games.items():
        assert entry["title"] == TITLES[game]
        assert entry["games"] == sum(1 for g, _, _ in played if g == game)
        assert shown(entry["players"]) == pytest.approx(expected(played, game), rel=1e-12)
    assert rated["left_out"] == []


def game_results() -> list[dict[str, Any]]:
    return [m["payload"] for m in NIGHT if m["payload"]["kind"] == "game"]


# --------------------------------------------------------------------------------------- the matches


def test_the_recording_has_the_shape_tables_publish() -> None:
    start = Entry(1, "2026-11-30T20:00:05.120+00:00", {})
    view = {
        "game": "spy-team",
        "status": "game-over",
        "players": [{"seat": s, "name": n, "score": 3} for s, n in enumerate("ABCD")],
        "rounds": [{"round": 1, "winners": [0, 2]}],
        "winners": [0, 2],
    }
    made = {r["kind"]: r for r in results_of("left", start, view).values()}
    for message in NIGHT:
        payload = message["payload"]
        assert message["topic"] == f"companion/{payload['table']}/result"
        assert set(payload) == set(made[payload["kind"]])


def test_each_game_becomes_the_match_its_result_says() -> None:
    by_game = {m.game: m for m in map(match_of, game_results()[:3])}
    assert by_game["spy-team"] == Match(
        by_game["spy-team"].id,
        "spy-team",
        (("ann", "cid"), ("bob", "dee")),
        (1, 2),
        {"ann": "Ann", "bob": "Bob", "cid": "Cid", "dee": "Dee"},
    )
    assert (by_game["peanuts"].teams, by_game["peanuts"].ranks) == (
        (("ann",), ("bob",), ("cid",), ("dee",), ("eve",)),
        (1, 3, 3, 4, 2),  # Bob and Cid tied on 1 point
    )
    assert (by_game["spy"].teams, by_game["spy"].ranks) == ((("ann",), ("eve",), ("bob",)), (2, 1, 2))


# ---------------------------------------------------------------------------------------- the night


@contextmanager
def league_process(tmp_path: Path, broker: Broker) -> Iterator[str]:
    """`companion league` in its own process; yields its URL once it answers."""
    port = free_port()
    command = [sys.executable, "-m", "companion.appliance.cli", "league", "--mqtt", broker.url]
    command += ["--db", str(tmp_path / "league.db"), "--host", "127.0.0.1", "--port", str(port)]
    with (tmp_path / "league.log").open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: get_league(url), 20.0, 0.1, what="the league to answer")
            yield url
        finally:
            process.terminate()
            process.wait(timeout=10)


def get_league(url: str, query: str = "") -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"{url}/api/league{query}", timeout=2) as response:
            return dict(json.load(response))
    except OSError:
        return None


# A result no table would send: the league logs it and leaves it out of everything.
MALFORMED = {
    "id": "x/1/game",
    "kind": "game",
    "table": "x",
    "game": "spy",
    "started_at": "2026-11-30T20:30:00Z",
}


def publish_night(broker: Broker) -> None:
    """Each result as its table sends it (QoS 1), in the recorded order, each acknowledged; and a
    malformed one among them."""
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="recorded-tables")
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    try:
        malformed = {"topic": "companion/x/result", "payload": {**MALFORMED, "players": "Ann, Bob"}}
        for message in [*NIGHT[:3], malformed, *NIGHT[3:]]:
            info = client.publish(message["topic"], json.dumps(message["payload"]), qos=1)
            info.wait_for_publish(timeout=5)
            assert info.is_published()
    finally:
        client.disconnect()
        client.loop_stop()


@pytest.mark.skipif(not MOSQUITTO, reason="needs Debian's mosquitto (scripts/test installs it)")
def test_a_recorded_night_through_the_broker_is_rated_as_openskill_rates_it(tmp_path: Path) -> None:
    broker = Broker(tmp_path / "broker")
    broker.start()
    try:
        with league_process(tmp_path, broker) as url:
            publish_night(broker)
            every = len(PLAYED)
            league = wait_for(
                lambda: (v := get_league(url)) and v["ratings"]["overall"]["games"] == every and v,
                20.0,
                0.1,
                what="every game to be rated",
            )
            assert_rated_as_openskill(league["ratings"], PLAYED)
            spy_team = next(s for s in league["standings"] if s["game"] == "spy-team")
            assert spy_team["games"] == 3  # the repeated result counted once here too
            assert "x" not in {r["table"] for r in league["recent"]}  # the malformed one is not kept
            # One night: its standings, and the ratings after it (the games up to that night).
            first = get_league(url, "?night=2026-11-30")
            assert first is not None and first["ratings"]["overall"]["games"] == FIRST_NIGHT
            assert_rated_as_openskill(first["ratings"], PLAYED[:FIRST_NIGHT])
    finally:
        broker.stop()
    said = (tmp_path / "league.log").read_text()
    assert "ignored a bad message on companion/x/result: result x/1/game: players must be" in said


def test_arrival_order_and_repeats_change_nothing(tmp_path: Path) -> None:
    shuffled = random.Random(23)
    for attempt in range(4):
        messages = [m["payload"] for m in NIGHT]
        shuffled.shuffle(messages)
        store = LeagueStore(tmp_path / f"league-{attempt}.db")
        for payload in [*messages, *messages[:3]]:  # and some sent again
            store.record(payload)
        league = league_json(store, titles=TITLES)
        assert_rated_as_openskill(league["ratings"], PLAYED)
        assert [r["game"] for r in league["recent"]] == [game for game, _, _ in PLAYED][::-1]  # newest first
        store.close()
    # The pure computation alone, repeats and all, in reverse arrival order.
    assert_rated_as_openskill(ratings(game_results()[::-1] * 2, TITLES), PLAYED)


def test_a_name_is_one_player_whatever_its_case(tmp_path: Path) -> None:
    store = LeagueStore(tmp_path / "league.db")
    for message in NIGHT:
        store.record(message["payload"])
    league = league_json(store, titles=TITLES)
    rated = league["ratings"]
    names = [r["player"] for r in rated["overall"]["players"]]
    assert sorted(names) == ["Ann", "Bob", "Cid", "Dee", "Eve"]  # "ann", "Ann ", "BOB", "dee" merged
    ann = next(r for r in rated["overall"]["players"] if r["player"] == "Ann")
    assert ann["played"] == 5
    # Spelt as first played, on every game's ratings and standings too (SPY's first game says "ann").
    for table in [*rated["games"], *league["standings"]]:
        assert {r["player"] for r in table["players"]} <= set(names), table["game"]
    store.close()


def test_a_result_the_league_cannot_read_is_refused_at_the_door(tmp_path: Path) -> None:
    store = LeagueStore(tmp_path / "league.db")
    with pytest.raises(ValueError, match="players must be a list of seats"):
        store.record({**MALFORMED, "players": [["Ann", 0]]})
    with pytest.raises(ValueError, match="winners must be a list of seats"):
        store.record({**MALFORMED, "players": [], "winners": 0})
    assert store.results() == [] and league_json(store)["ratings"]["overall"]["games"] == 0
    store.close()


def test_a_game_that_cannot_be_rated_is_left_out_and_moves_nobody(tmp_path: Path) -> None:
    good = game_results()
    template = good[1]  # a SPY game: Ann, Eve, Bob

    def variant(table: str, players: list[Any], started_at: str | None = None) -> dict[str, Any]:
        return {**template, "table": table, "id": f"{table}/x/game", "players": players} | (
            {"started_at": started_at} if started_at else {}
        )

    seats = [{"seat": 0, "name": "Ann", "score": 1}, {"seat": 1, "name": " ANN", "score": 0}]
    bad = [
        variant("t1", seats),
        variant("t2", [{"seat": 0, "name": "  ", "score": 1}, {"seat": 1, "name": "Bob", "score": 0}]),
        variant("t3", [{"seat": 1, "name": "Eve", "score": 1}]),
        variant("t4", template["players"], started_at="last tuesday"),
        {**good[0], "table": "t5", "id": "t5/x/game", "winners": []},  # Spy Team without a winner
    ]
    rated = ratings(good + bad, TITLES)
    reasons = {entry["table"]: entry["reason"] for entry in rated["left_out"]}
    assert reasons == {
        "t1": "one name at two seats",
        "t2": "a player has no name",
        "t3": "fewer than two players",
        "t4": "its start time is not a time",
        "t5": "no winning side",
    }
    assert_rated_as_openskill({**rated, "left_out": []}, PLAYED)


# ------------------------------------------------------------------------------------------ the page


@pytest.mark.parametrize(("width", "height"), [(360, 740), (390, 844), (800, 1280), (1280, 800)])
def test_the_league_page_shows_the_ratings_beside_the_standings(
    tmp_path: Path, browser: Any, width: int, height: int
) -> None:
    """Debian's Chromium on a real server: each game's ratings and the overall ones, best first,
    with what the figure means, and no sideways scrolling from a small phone to a tablet."""
    store = LeagueStore(tmp_path / "league.db")
    for message in NIGHT:
        store.record(message["payload"])
    rated = league_json(store, titles=TITLES)["ratings"]
    server = create_server(create_league_app(store, TITLES), host="127.0.0.1", port=0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"http://127.0.0.1:{server.effective_port}/")
        page.wait_for_selector("#overall tbody tr")
        rows = page.locator("#overall tbody tr").all_inner_texts()
        assert [row.split()[0] for row in rows] == [r["player"] for r in rated["overall"]["players"]]
        best = rated["overall"]["players"][0]
        assert f"{best['rating']:.1f}" in rows[0] and f"{best['sigma']:.1f}" in rows[0]
        spy_team = page.locator(".game[data-game='spy-team'] .ratings tbody tr").all_inner_texts()
        per_game = next(g for g in rated["games"] if g["game"] == "spy-team")["players"]
        assert [row.split()[0] for row in spy_team] == [r["player"] for r in per_game]
        assert "3 \u00d7 uncertainty (\u03c3)" in page.locator("#ratings-help").inner_text()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        # The second night: its standings, the ratings after it, SPY not played that night.
        page.select_option("#night", "2026-12-07")
        page.wait_for_function("document.getElementById('ratings-scope').textContent === 'up to 2026-12-07'")
        assert "Not played this night." in page.locator(".game[data-game='spy']").inner_text()
        assert page.locator(".game[data-game='spy'] .ratings tbody tr").count() == 5
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.close()
    finally:
        server.close()
        store.close()
