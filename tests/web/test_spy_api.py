"""SPY through the web API, as the table plays it: colours claimed by tapping Spy cards, spied cards
tapped by their owners, passes and dropped cards, to a winner with two, three and four players. Also:
refusals journal nothing, undo takes back a lit bomb, and the live event stream never names a card
that is not face up."""

from __future__ import annotations

import json
import re
from typing import Any

from companion.appliance.daemon import Daemon
from tests.conftest import AUTH, column, open_event_stream, state

LABELS = ["Safe 1", "Safe 2", "Top Secret 1", "Top Secret 2"]


# ------------------------------------------------------------------------------------------ helpers


def start(client: Any, players: list[str], first: int = 0) -> dict[str, Any]:
    response = client.post(
        "/api/games", json={"game": "spy", "players": players, "options": {"start": first}}, headers=AUTH
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def send(client: Any, step: dict[str, Any], status: int = 200) -> dict[str, Any]:
    """One input: `{"tap": "red-safe-1"}` (optionally with "seat") goes to /api/taps, anything else
    to /api/actions. Checks the status and returns the JSON answer."""
    if "tap" in step:
        body = {"card": f"spy/{step['tap']}", **{k: v for k, v in step.items() if k != "tap"}}
        response = client.post("/api/taps", json=body, headers=AUTH)
    else:
        response = client.post("/api/actions", json=step, headers=AUTH)
    assert response.status_code == status, (step, response.get_json())
    return response.get_json()


def play(
    client: Any, cues: list[dict[str, Any]], script: list[tuple[dict[str, Any], list[str]]]
) -> dict[str, Any]:
    """Send each input; check the cues it played (leaving out `your-turn`, of which there is at most
    one) and return the last view."""
    view: dict[str, Any] = {}
    for step, expected in script:
        before = len(cues)
        view = send(client, step)
        names = [cue["cue"] for cue in cues[before:]]
        assert names.count("your-turn") <= 1, (step, names)
        assert [n for n in names if n != "your-turn"] == expected, step
    return view


def first(cues: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(cue for cue in cues if cue["cue"] == name)


# ------------------------------------------------------------------------------- games to a winner


def test_the_first_turn_names_its_player_once(client: Any, cues: list[dict[str, Any]]) -> None:
    """The first your-turn of a game was "Ann: Ann: tap the Spy card of your colour"."""
    start(client, ["Ann", "Bob"])
    turn = first(cues, "your-turn")
    assert (turn["seat"], turn["text"]) == (
        0,
        "Ann: tap the Spy card of your colour, or hold your seat button to play green "
        "(press it for another colour)",
    )


def test_two_player_game_to_its_winner(client: Any, cues: list[dict[str, Any]]) -> None:
    start(client, ["Ann", "Bob"], first=1)  # Bob is the youngest
    send(client, {"type": "claim", "seat": 0, "colour": "purple"}, 409)  # two players: green and red only
    view = play(
        client,
        cues,
        [
            ({"tap": "green-spy"}, ["card-accepted"]),  # Ann
            ({"tap": "red-spy"}, ["card-accepted"]),  # Bob
        ],
    )
    assert view["status"] == "playing" and view["turn"] == 1
    assert column(view, "colour") == ["green", "red"] and column(view, "bombs") == [3, 3]

    view = play(
        client,
        cues,
        [
            ({"tap": "green-top-secret-2"}, ["spied"]),  # Bob → Ann: "It's a Top Secret"
            ({"tap": "red-bomb-2-extra"}, ["bomb-lit"]),  # Ann → Bob: the extra bomb is in play
            ({"tap": "green-safe-1"}, ["card-revealed"]),  # Bob → Ann: her target
            ({"type": "pass"}, ["card-accepted"]),  # Ann
            ({"tap": "green-bomb-1"}, ["bomb-lit"]),  # Bob → Ann
            ({"tap": "red-bomb-2-extra"}, ["boom", "player-eliminated", "game-won"]),  # Ann: BOOM
        ],
    )
    assert view["status"] == "game-over" and view["winners"] == [1] and view["turn"] is None
    assert column(view, "eliminated") == [True, False]
    assert column(view, "score") == [0, 1]
    assert column(view, "bombs_lit") == [1, 1]
    assert [e["revealed"] for e in view["players"][0]["exposure"]] == [True, False, False, False]
    assert first(cues, "spied")["text"] == "It's a Top Secret"
    boom = first(cues, "boom")  # Bob shows the bomb that went off to the table
    assert boom["data"] == {
        "spier": 0,
        "owner": 1,
        "card": "spy/red-bomb-2-extra",
        "name": "Red Bomb 2 (extra)",
    }
    assert first(cues, "player-eliminated")["seat"] == 0
    won = first(cues, "game-won")
    assert (won["seat"], won["text"]) == (1, "Bob wins")
    assert state(client) == view
    send(client, {"type": "pass"}, 409)  # the game is over


def test_three_player_game_to_its_winner(client: Any, cues: list[dict[str, Any]]) -> None:
    start(client, ["Ann", "Bob", "Cy"], first=2)
    view = play(
        client,
        cues,
        [
            ({"tap": "blue-spy", "seat": 2}, ["card-accepted"]),  # Cy, by the tap's seat
            ({"tap": "green-spy"}, ["card-accepted"]),  # the prompt's seat: Ann
            ({"tap": "purple-spy"}, ["card-accepted"]),  # Bob
        ],
    )
    assert column(view, "colour") == ["green", "purple", "blue"]
    assert view["turn"] == 2 and column(view, "bombs") == [2, 2, 2]

    view = play(
        client,
        cues,
        [
            ({"tap": "green-safe-1"}, ["card-revealed"]),  # Cy → Ann
            ({"tap": "purple-bomb-1"}, ["bomb-lit"]),  # Ann → Bob
            ({"tap": "blue-safe-2"}, ["spied"]),  # Bob → Cy: "It's a Safe"
            ({"tap": "green-safe-1"}, ["already-exposed"]),  # Cy → Ann: nothing new
            ({"tap": "purple-bomb-1"}, ["boom", "player-eliminated"]),  # Ann → Bob: BOOM, Ann is out
        ],
    )
    assert view["turn"] == 1 and column(view, "eliminated") == [True, False, False]
    assert view["last_outcome"] == {
        "kind": "boom",
        "spier": 0,
        "owner": 1,
        "text": "BOOM! Ann spied a lit bomb in Bob's base.",
    }
    send(client, {"type": "pass", "seat": 2}, 409)  # not Cy's turn
    view = play(
        client,
        cues,
        [
            ({"type": "pass", "seat": 1}, ["card-accepted"]),  # Bob
            ({"tap": "purple-safe-1"}, ["card-revealed"]),  # Cy → Bob
            ({"type": "eliminate", "seat": 1}, ["player-eliminated", "game-won"]),  # Bob drops a card
        ],
    )
    assert view["status"] == "game-over" and view["winners"] == [2]
    assert column(view, "eliminated") == [True, True, False]
    assert column(view, "bombs_lit") == [0, 1, 0]
    assert column(view, "next") == [None, None, 0]
    spied = first(cues, "spied")
    assert spied["text"] == "It's a Safe" and spied["data"] == {"spier": 1, "owner": 2, "type": "safe"}
    assert first(cues, "already-exposed")["data"]["name"] == "Green Safe 1"  # face up: may be named
    assert first(cues, "game-won")["seat"] == 2


def test_four_player_game_to_its_winner(client: Any, cues: list[dict[str, Any]]) -> None:
    start(client, ["Ann", "Bob", "Cy", "Di"])
    colours = ["green", "red", "purple", "blue"]
    view = play(client, cues, [({"tap": f"{colour}-spy"}, ["card-accepted"]) for colour in colours])
    assert column(view, "colour") == colours and view["turn"] == 0

    view = play(
        client,
        cues,
        [
            ({"tap": "blue-safe-1"}, ["card-revealed"]),  # Ann → Di
            ({"tap": "blue-safe-2"}, ["card-revealed"]),  # Bob → Di
            ({"tap": "blue-top-secret-1"}, ["card-revealed"]),  # Cy → Di
            ({"type": "pass"}, ["card-accepted"]),  # Di
            ({"tap": "blue-top-secret-2"}, ["card-revealed", "player-eliminated"]),  # Ann → Di: Di is out
        ],
    )
    di = view["players"][3]
    assert di["eliminated"] and di["next"] is None and all(e["revealed"] for e in di["exposure"])
    assert view["turn"] == 1
    send(client, {"tap": "blue-safe-1"}, 409)  # Di is out: her cards can't be spied

    view = play(
        client,
        cues,
        [
            ({"tap": "purple-bomb-2"}, ["bomb-lit"]),  # Bob → Cy
            ({"type": "eliminate", "seat": 2}, ["player-eliminated"]),  # Cy drops a card on his turn
            ({"tap": "red-top-secret-1"}, ["spied"]),  # Ann → Bob: not his target
            ({"tap": "green-bomb-1"}, ["bomb-lit"]),  # Bob → Ann
            ({"type": "pass"}, ["card-accepted"]),  # Ann
            ({"tap": "green-bomb-1"}, ["boom", "player-eliminated", "game-won"]),  # Bob → Ann: BOOM
        ],
    )
    assert view["status"] == "game-over" and view["winners"] == [0]
    assert column(view, "eliminated") == [False, True, True, True]
    assert column(view, "score") == [1, 0, 0, 0]
    assert column(view, "bombs_lit") == [1, 0, 1, 0]
    eliminated = [cue["seat"] for cue in cues if cue["cue"] == "player-eliminated"]
    assert eliminated == [3, 2, 1]
    assert first(cues, "game-won")["text"] == "Ann wins"


# ---------------------------------------------------------------------------- refusals and undo


def test_an_extra_bomb_in_a_three_player_game_is_refused_and_not_journaled(
    daemon: Daemon, client: Any, cues: list[dict[str, Any]]
) -> None:
    start(client, ["Ann", "Bob", "Cy"])
    for colour in ("green", "red", "purple"):
        send(client, {"tap": f"{colour}-spy"})
    entries, view = list(daemon.journal.entries()), state(client)
    cues.clear()

    answer = send(client, {"tap": "red-bomb-2-extra"}, 409)
    assert "extra bomb" in answer["error"] and "two-player" in answer["error"]
    assert list(daemon.journal.entries()) == entries
    assert state(client) == view
    assert [cue["cue"] for cue in cues] == ["error"]

    send(client, {"tap": "red-bomb-2"})  # Ann → Bob: the ordinary Bomb 2 is in play
    assert len(list(daemon.journal.entries())) == len(entries) + 1
    assert column(state(client), "bombs_lit") == [0, 1, 0]


def test_undo_takes_back_a_lit_bomb(daemon: Daemon, client: Any, cues: list[dict[str, Any]]) -> None:
    start(client, ["Ann", "Bob", "Cy"])
    for colour in ("green", "red", "purple"):
        send(client, {"tap": f"{colour}-spy"})
    view = send(client, {"tap": "red-bomb-1"})  # Ann lights one of Bob's bombs
    assert column(view, "bombs_lit") == [0, 1, 0] and view["turn"] == 1
    journaled = len(list(daemon.journal.entries()))

    response = client.post("/api/undo", headers=AUTH)
    assert response.status_code == 200
    view = response.get_json()
    assert view.pop("taken_back") == "Took back: Ann lit a bomb in Bob's base: TSSSsss."
    assert column(view, "bombs_lit") == [0, 0, 0] and view["turn"] == 0 and view["last_outcome"] is None
    assert state(client) == view
    entries = list(daemon.journal.entries())
    assert len(entries) == journaled + 1  # nothing deleted: the undo is an entry of its own
    assert entries[-1].event == {"type": "undo"}
    assert entries[-2].event == {"type": "tap", "card": "spy/red-bomb-1"}
    assert cues[-1]["cue"] == "undo"

    send(client, {"tap": "red-bomb-1"})  # the same bomb again: lit, not BOOM, since it was unlit
    assert [cue["cue"] for cue in cues if cue["cue"] in ("bomb-lit", "boom")] == ["bomb-lit", "bomb-lit"]
    assert client.post("/api/undo").status_code == 401  # and undo needs the token


# ------------------------------------------------------------------------ the event stream's secrets


def card_names(daemon: Daemon) -> dict[str, str]:
    return {card.id: card.name for card in daemon.catalog["spy"].cards.values()}


def face_up(view: dict[str, Any]) -> set[str]:
    """The ids of the cards a view shows face up (the exposure order is fixed: Safe 1 … Top Secret 2)."""
    slugs = ["safe-1", "safe-2", "top-secret-1", "top-secret-2"]
    return {
        f"spy/{player['colour']}-{slugs[i]}"
        for player in view.get("players", [])
        for i, entry in enumerate(player["exposure"])
        if entry["revealed"]
    }


SECRET_NUMBER = re.compile(r"(Safe|Top Secret|Bomb) ?[12]|(safe|top-secret|bomb)-[12]", re.IGNORECASE)


def test_the_event_stream_never_names_a_card_that_is_not_face_up(daemon: Daemon, client: Any) -> None:
    # The scoreboard's own request. Read in this thread (Flask keeps the request context with the
    # generator): first up to the current state, which means the stream now receives every message...
    response, stream, chunks = open_event_stream(client)

    start(client, ["Ann", "Bob", "Cy", "Di"])
    script: list[tuple[dict[str, Any], int]] = [
        ({"tap": "green-spy"}, 200),
        ({"tap": "red-safe-1"}, 409),  # setup: only a Spy card (the refusal must not name it)
        ({"tap": "red-spy"}, 200),
        ({"type": "claim", "seat": 2, "colour": "purple"}, 200),
        ({"tap": "blue-spy"}, 200),
        ({"tap": "red-top-secret-2"}, 200),  # Ann → Bob: It's a Top Secret
        ({"tap": "purple-bomb-1"}, 200),  # Bob → Cy: lit
        ({"tap": "purple-bomb-2"}, 409),  # Cy taps his own card
        ({"tap": "blue-safe-2"}, 200),  # Cy → Di: It's a Safe
        ({"tap": "red-bomb-2-extra"}, 409),  # not in a four-player game
        ({"tap": "green-safe-1"}, 200),  # Di → Ann: exposed
        ({"tap": "purple-bomb-2"}, 200),  # Ann → Cy: the other bomb lit
        ({"tap": "green-safe-1"}, 200),  # Bob → Ann: already exposed
        ({"type": "pass"}, 200),  # Cy
        ({"tap": "purple-bomb-1"}, 200),  # Di → Cy: BOOM, Di is out
        ({"tap": "red-safe-1"}, 200),  # Ann → Bob: exposed
        ({"tap": "green-safe-2"}, 200),  # Bob → Ann: exposed
        ({"tap": "green-bomb-2"}, 200),  # Cy → Ann: lit
        ({"tap": "red-safe-2"}, 200),  # Ann → Bob: exposed
        ({"type": "eliminate", "seat": 2}, 200),  # Cy drops a card
        ({"tap": "green-top-secret-1"}, 200),  # Bob → Ann: exposed
        ({"tap": "red-top-secret-1"}, 200),  # Ann → Bob: exposed
        ({"tap": "green-top-secret-2"}, 200),  # Bob → Ann: exposed, Ann is out: Bob wins
    ]
    for step, status in script:
        send(client, step, status)
    final = state(client)
    assert final["status"] == "game-over" and final["winners"] == [1]

    # ...then, once the game is over, everything it queued (far fewer than the queue holds), up to
    # the game's last cue. A keepalive would mean the queue ran dry before that.
    while '"cue":"game-won"' not in chunks[-1] and not chunks[-1].startswith(": keepalive"):
        chunks.append(next(stream).decode())
    response.close()

    names = card_names(daemon)
    messages = [m for m in "".join(chunks).split("\n\n") if m.startswith("event: ")]
    accepted = sum(status == 200 for _, status in script)
    assert sum(m.startswith("event: state") for m in messages) == 1 + 1 + accepted  # first, start, inputs
    kinds = [json.loads(m.split("data: ", 1)[1])["cue"] for m in messages if m.startswith("event: cue")]
    every = ("spied", "bomb-lit", "boom", "card-revealed", "already-exposed", "player-eliminated", "game-won")
    assert set(every) | {"error"} <= set(kinds)

    # Cy shows the bomb that went off to the table: its BOOM cue, and nothing else, names it.
    boom = next(i for i, m in enumerate(messages) if m.startswith("event: cue") and '"cue":"boom"' in m)
    assert '"card":"spy/purple-bomb-1"' in messages[boom]
    shown: set[str] = set()
    for index, message in enumerate(messages):
        kind, data = message.split("\n", 1)
        payload = json.loads(data.removeprefix("data: "))
        if kind == "event: state":
            shown = face_up(payload)  # what is face up from this state on (its cues follow it)
        text = data
        allowed = shown | {"spy/purple-bomb-1"} if index == boom else shown
        for card_id, name in names.items():
            if card_id in allowed:
                text = text.replace(card_id, "").replace(name, "")
            elif not card_id.endswith("-spy"):
                assert card_id not in text and name not in text, (card_id, message)
        for label in LABELS:  # the fixed track labels, the same for everyone
            text = text.replace(f'"card":"{label}"', "")
        assert not SECRET_NUMBER.search(text), message

    # The stream did carry the face-up cards by name: the check above had something to find.
    assert "Green Top Secret 2" in "".join(chunks) and "spy/red-safe-2" in "".join(chunks)
