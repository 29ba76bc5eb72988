"""The HTTP API with Flask's test client: reads are open, control needs the token, bad input changes
nothing, and a whole Spy Team game is played through /api/actions and /api/taps."""

from __future__ import annotations

from typing import Any

import pytest

from companion.appliance.daemon import Daemon
from tests.conftest import AUTH
from tests.spy_team_play import choose, play_trick, post, sabotage_round

PLAYERS = ["Ann", "Bob", "Cid", "Dee"]


def start(client: Any, start_seat: int = 0) -> dict[str, Any]:
    return post(
        client, "/api/games", {"game": "spy-team", "players": PLAYERS, "options": {"start": start_seat}}
    )


def journal_length(daemon: Daemon) -> int:
    return len(list(daemon.journal.entries()))


def test_healthz_names_the_backends(client: Any) -> None:
    health = client.get("/healthz").get_json()
    assert health["ok"] is True
    assert health["journal"] == "ok"
    assert health["gpio"] == "mock"
    assert health["readers"][0]["kind"] == "virtual"
    assert health["reader"] == "ok"


def test_the_catalog_lists_every_card_with_its_attributes(client: Any) -> None:
    games = {g["game"]: g for g in client.get("/api/games").get_json()["games"]}
    spy_team = games["spy-team"]
    assert (spy_team["min_players"], spy_team["max_players"]) == (4, 4)
    ids = {card["id"] for card in spy_team["cards"]}
    assert len(ids) == 48 and "spy-team/red-17" in ids and "spy-team/blue-24" in ids
    red17 = next(c for c in spy_team["cards"] if c["id"] == "spy-team/red-17")
    assert red17["colour"] == "red" and red17["number"] == 17


def test_the_state_is_idle_before_a_game(client: Any) -> None:
    view = client.get("/api/state").get_json()
    assert view["status"] == "idle"
    assert view["prompt"]["actions"] == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/games", {"game": "spy-team", "players": PLAYERS}),
        ("/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1}),
        ("/api/taps", {"card": "spy-team/red-1"}),
        ("/api/undo", None),
        ("/api/buttons", {"button": "next", "hold": False}),
    ],
)
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "test-token"}])
def test_control_calls_need_the_token(
    client: Any, daemon: Daemon, path: str, body: Any, headers: dict[str, str]
) -> None:
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == 401
    assert "token" in response.get_json()["error"]
    assert journal_length(daemon) == 0


def test_malformed_json_is_refused_with_an_error_cue(client: Any, daemon: Daemon, cues: list[Any]) -> None:
    start(client)
    before = client.get("/api/state").get_json()
    response = client.post(
        "/api/taps", data="{not json", headers={**AUTH, "Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.get_json() == {"error": "The request body must be a JSON object."}
    assert cues[-1]["cue"] == "error"
    assert client.get("/api/state").get_json() == before
    assert journal_length(daemon) == 1


@pytest.mark.parametrize(
    "body",
    [{}, {"card": "spy-team/red-1", "uid": "04aa"}, {"card": 17}, {"card": "spy-team/red-1", "seat": "2"}],
)
def test_a_tap_needs_one_card_or_uid(client: Any, daemon: Daemon, body: dict[str, Any]) -> None:
    start(client)
    response = client.post("/api/taps", json=body, headers=AUTH)
    assert response.status_code == 400
    assert journal_length(daemon) == 1


def test_an_unknown_card_id_is_refused_with_the_unknown_card_cue(
    client: Any, daemon: Daemon, cues: list[Any]
) -> None:
    start(client)
    choose(client, "1/5")
    before = client.get("/api/state").get_json()
    response = client.post("/api/taps", json={"card": "spy-team/green-3"}, headers=AUTH)
    assert response.status_code == 409
    assert "Unknown card spy-team/green-3" in response.get_json()["error"]
    assert cues[-1]["cue"] == "unknown-card"
    assert client.get("/api/state").get_json() == before
    assert journal_length(daemon) == 3


def test_the_wrong_seat_is_refused(client: Any, daemon: Daemon, cues: list[Any]) -> None:
    start(client)
    choose(client, "1/5")
    response = client.post("/api/taps", json={"card": "spy-team/red-1", "seat": 2}, headers=AUTH)
    assert response.status_code == 409
    assert "Ann" in response.get_json()["error"]
    assert cues[-1]["cue"] == "error"
    assert journal_length(daemon) == 3


def test_an_action_key_no_action_declares_is_a_400_naming_it(
    client: Any, daemon: Daemon, cues: list[Any]
) -> None:
    start(client)
    before = client.get("/api/state").get_json()
    body = {"type": "mission", "seat": 0, "tile": "1/5", "target": 1, "colour": "red"}
    response = client.post("/api/actions", json=body, headers=AUTH)
    assert response.status_code == 400 and "'colour'" in response.get_json()["error"]
    assert cues[-1]["cue"] == "error" and "'colour'" in cues[-1]["text"]
    assert client.get("/api/state").get_json() == before
    assert journal_length(daemon) == 1


def test_only_the_declared_keys_of_an_action_are_journaled(client: Any, daemon: Daemon) -> None:
    view = start(client)
    listed = view["prompt"]["actions"][0]  # posted back as the control page lists it, label and all
    assert {"label", "primary", "confirm"} <= set(listed)
    post(client, "/api/actions", listed)
    journaled = list(daemon.journal.entries())[-1].event
    assert journaled == {key: listed[key] for key in ("type", "seat", "tile", "target")}


def test_an_unknown_game_and_a_wrong_player_count_are_refused(client: Any, daemon: Daemon) -> None:
    response = client.post("/api/games", json={"game": "chess", "players": PLAYERS}, headers=AUTH)
    assert response.status_code == 409 and "Unknown game" in response.get_json()["error"]
    response = client.post("/api/games", json={"game": "spy-team", "players": PLAYERS[:3]}, headers=AUTH)
    assert response.status_code == 409 and "4 players" in response.get_json()["error"]
    assert journal_length(daemon) == 0


def test_undo_through_the_api(client: Any) -> None:
    start(client)
    choose(client, "2/4")
    before = client.get("/api/state").get_json()
    post(client, "/api/taps", {"card": "spy-team/red-5"})
    assert post(client, "/api/undo") == {**before, "taken_back": "Took back: Ann played Red 5."}


def test_a_whole_game_from_the_first_tile_to_the_winner(client: Any, cues: list[Any]) -> None:
    start(client, start_seat=3)
    view: dict[str, Any] = {}
    for number, tile in enumerate(["1/5", "2/4", "3/3"], start=1):
        assert client.get("/api/state").get_json()["start_seat"] == (3 + number - 1) % 4
        view = sabotage_round(client, tile)
        cat = view["teams"][0]
        assert tile in cat["tiles_removed"]
        assert view["rounds"][-1]["winners"] == [0, 2]
    assert view["status"] == "game-over"
    assert view["winners"] == [0, 2]
    assert [p["score"] for p in view["players"]] == [3, 0, 3, 0]
    names = [c["cue"] for c in cues]
    assert names.count("mission-sabotaged") == 3
    assert names.count("round-won") == 3
    assert names[-1] == "game-won" or "game-won" in names
    # Nothing is accepted once the game is over.
    response = client.post("/api/taps", json={"card": "spy-team/red-1"}, headers=AUTH)
    assert response.status_code == 409


def test_a_mission_accomplished_mid_hand_through_the_api(client: Any, cues: list[Any]) -> None:
    start(client)
    # C.A.T. 1/5: Ann aims for 1, Cid for 5; B.I.R.D. 3/3.
    post(client, "/api/actions", {"type": "mission", "seat": 0, "tile": "1/5", "target": 1})
    post(client, "/api/actions", {"type": "mission", "seat": 1, "tile": "3/3", "target": 3})
    play_trick(client, winner=0)
    for _ in range(4):
        view = play_trick(client, winner=2)
    assert view["tricks_won"][2] == 4
    view = play_trick(client, winner=2)
    assert view["round"] == 2
    assert view["rounds"][0]["winners"] == [0, 2]
    assert "mission-accomplished" in [c["cue"] for c in cues]
    assert view["teams"][0]["tiles_removed"] == ["1/5"]


def test_a_request_over_16_kib_is_refused_as_json(client: Any, daemon: Daemon) -> None:
    start(client)
    response = client.post("/api/actions", json={"type": "draw", "junk": "x" * 20_000}, headers=AUTH)
    assert response.status_code == 413
    assert "error" in response.get_json()
    assert journal_length(daemon) == 1


def test_a_huge_card_id_is_not_echoed(client: Any, cues: list[Any]) -> None:
    start(client)
    choose(client, "1/5")
    response = client.post("/api/taps", json={"card": "a" * 10_000}, headers=AUTH)
    assert response.status_code == 409
    assert response.get_json() == {"error": "That is not a card id."}
    assert len(cues[-1]["text"]) < 100


def test_unknown_calls_answer_json(client: Any) -> None:
    assert client.get("/api/nope").get_json() == {
        "error": "The requested URL was not found on the server. "
        "If you entered the URL manually please check your spelling "
        "and try again."
    }
    response = client.get("/api/undo")
    assert response.status_code == 405 and "error" in response.get_json()


def test_the_bearer_scheme_is_case_insensitive_and_json_needs_no_content_type(client: Any) -> None:
    response = client.post(
        "/api/games",
        data='{"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]}',
        headers={"Authorization": "bearer test-token", "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 201


def test_a_long_player_name_is_refused(client: Any, daemon: Daemon) -> None:
    response = client.post(
        "/api/games", json={"game": "spy-team", "players": ["A" * 200, "B", "C", "D"]}, headers=AUTH
    )
    assert response.status_code == 409 and "at most 24 characters" in response.get_json()["error"]
    assert journal_length(daemon) == 0


def test_a_tap_before_the_missions_names_the_teams_once_punctuated(client: Any) -> None:
    start(client)
    response = client.post("/api/taps", json={"card": "spy-team/red-1"}, headers=AUTH)
    assert response.status_code == 409
    assert response.get_json()["error"] == (
        "Choose the missions before playing a card: waiting for C.A.T. and B.I.R.D."
    )
