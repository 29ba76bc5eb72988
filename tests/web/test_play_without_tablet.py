"""Issue 21: once a game has started, no input needs the tablet. Whole games of SPY and Spy Team
played through `POST /api/taps` and `POST /api/buttons` only (after `POST /api/games`), against the
same games played with the tablet's actions: the same final view, results included. Each game is
played with one reader (taps carry no seat) and with per-seat readers (each tap carries a seat)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from companion.appliance.daemon import Daemon
from companion.games.spy_team.rules import parse_tile
from tests.conftest import AUTH, BUTTON_HOLD
from tests.games.test_peanuts import ENGINE
from tests.games.test_peanuts_table import GestureTable
from tests.spy_team_play import trick_cards

HOLD = BUTTON_HOLD

Step = tuple[Any, ...]


@pytest.fixture
def table(buttons_daemon: Daemon) -> Any:
    return buttons_daemon.app.test_client()


def post(client: Any, path: str, body: Any) -> dict[str, Any]:
    response = client.post(path, json=body, headers=AUTH)
    assert response.status_code in (200, 201), (path, body, response.get_json())
    answer: dict[str, Any] = response.get_json()
    return answer


def press(client: Any, button: str, hold: bool = False) -> dict[str, Any]:
    return post(client, "/api/buttons", {"button": button, "hold": hold})


def view(client: Any) -> dict[str, Any]:
    answer: dict[str, Any] = client.get("/api/state").get_json()
    return answer


# ----------------------------------------------------------------------------------------- SPY

COLOURS = ("green", "red", "purple", "blue")


def spy_owner(state: dict[str, Any], card: str) -> int:
    colour = card.split("-")[0]
    return next(p["seat"] for p in state["players"] if p["colour"] == colour)


def spy_tablet(client: Any, step: Step, seats: bool) -> None:
    """One step the way a table with the tablet gives it."""
    kind = step[0]
    if kind == "claim":
        post(client, "/api/actions", {"type": "claim", "seat": step[1], "colour": step[2]})
    elif kind == "pass":
        post(client, "/api/actions", {"type": "pass"})
    elif kind == "drop":
        post(client, "/api/actions", {"type": "eliminate", "seat": step[1]})
    else:
        spy_tap(client, step, seats)


def spy_buttons(client: Any, step: Step, seats: bool) -> None:
    """The same step with the cards and the buttons only: what the prompt says to do."""
    kind = step[0]
    if kind == "claim":
        seat, colour = step[1], step[2]
        for _ in range(len(COLOURS)):  # press until the prompt shows the colour, then hold
            if view(client)["prompt"]["text"].split("hold your seat button to play ")[1].startswith(colour):
                break
            press(client, f"seat-{seat}")
        press(client, f"seat-{seat}", hold=True)
    elif kind == "pass":
        press(client, "next")
    elif kind == "drop":
        press(client, f"seat-{step[1]}", hold=True)
    else:
        spy_tap(client, step, seats)


def spy_tap(client: Any, step: Step, seats: bool) -> None:
    """("tap", card) in play: the owner taps it; ("tap", card, seat) in setup: that seat's Spy card."""
    card = f"spy/{step[1]}"
    body: dict[str, Any] = {"card": card}
    if seats:
        body["seat"] = step[2] if len(step) > 2 else spy_owner(view(client), step[1])
    post(client, "/api/taps", body)


SPY_GAMES: dict[str, tuple[list[str], list[Step], str]] = {
    # Two players: Bob's whole exposure track is spied, so Ann wins by exposure.
    "2p-exposure": (
        ["Ann", "Bob"],
        [
            ("claim", 0, "red"),
            ("claim", 1, "green"),
            ("tap", "green-safe-1"),
            ("pass",),
            ("tap", "green-safe-2"),
            ("tap", "red-bomb-1"),
            ("tap", "green-top-secret-1"),
            ("pass",),
            ("tap", "green-top-secret-2"),
        ],
        "Ann",
    ),
    # Three players: a bomb lit then spied again (BOOM, Ann out), then Cy drops a card.
    "3p-boom-and-drop": (
        ["Ann", "Bob", "Cy"],
        [
            ("claim", 0, "green"),
            ("tap", "red-spy", 1),
            ("claim", 2, "blue"),
            ("tap", "red-bomb-1"),
            ("tap", "blue-safe-1"),
            ("pass",),
            ("tap", "red-bomb-1"),
            ("drop", 2),
        ],
        "Bob",
    ),
    # Four players: a Top Secret answered by type, an exposure, a drop out of turn, an exposed card
    # spied again, a lit bomb, a drop on one's own turn, then a win by exposure.
    "4p-every-outcome": (
        ["Ann", "Bob", "Cy", "Di"],
        [
            ("tap", "green-spy", 0),
            ("claim", 1, "red"),
            ("claim", 2, "purple"),
            ("tap", "blue-spy", 3),
            ("tap", "red-top-secret-2"),
            ("tap", "green-safe-1"),
            ("pass",),
            ("drop", 1),
            ("tap", "green-safe-1"),
            ("tap", "purple-bomb-2"),
            ("drop", 2),
            ("tap", "green-safe-2"),
            ("pass",),
            ("tap", "green-top-secret-1"),
            ("pass",),
            ("tap", "green-top-secret-2"),
        ],
        "Di",
    ),
}


def play(
    client: Any, game: str, players: list[str], steps: list[Step], one: Callable[..., None], seats: bool
) -> Any:
    post(client, "/api/games", {"game": game, "players": players})
    for step in steps:
        one(client, step, seats)
    return view(client)


@pytest.mark.parametrize("seats", [False, True], ids=["one-reader", "seat-readers"])
@pytest.mark.parametrize("name", list(SPY_GAMES))
def test_spy_is_played_with_cards_and_buttons_alone(
    table: Any, name: str, seats: bool, tmp_path: Path
) -> None:
    players, steps, winner = SPY_GAMES[name]
    by_buttons = play(table, "spy", players, steps, spy_buttons, seats)
    assert by_buttons["status"] == "game-over"
    assert [by_buttons["players"][s]["name"] for s in by_buttons["winners"]] == [winner]
    kinds = {p["last_outcome"]["kind"] for p in by_buttons["players"] if p["last_outcome"]}
    assert kinds  # the games reach real outcomes, not only passes
    by_tablet = play(table, "spy", players, steps, spy_tablet, seats)
    assert by_tablet == by_buttons


def test_the_spy_games_reach_every_outcome(table: Any) -> None:
    """Between them the scripted games see a BOOM, a win by exposure and players put out."""
    seen: set[str] = set()
    for players, steps, _ in SPY_GAMES.values():
        final = play(table, "spy", players, steps, spy_buttons, False)
        seen |= {line for line in final["log"]}
    story = " ".join(seen)
    for words in (
        "BOOM!",
        "dropped a card and is out",
        "is out: Green Top Secret 2 is exposed",
        "already exposed",
    ):
        assert words in story, words


# ----------------------------------------------------------------------------------- Spy Team

# Each round: C.A.T.'s mission and B.I.R.D.'s, each (tile, the target of the team's first seat, the
# seat whose buttons set it), then who takes each trick. C.A.T. removes 1/5, 2/4 and 3/3 (B.I.R.D. a
# 1/5 in between): every tile is chosen, both teams complete a mission, and the game ends.
ROUNDS: list[tuple[tuple[str, int, int], tuple[str, int, int], list[int]]] = [
    (("1/5", 1, 0), ("1/5", 1, 1), [1, 1]),  # B.I.R.D. sabotaged: Bob wins 2 aiming for 1
    (("2/4", 4, 2), ("2/4", 4, 3), [3, 3, 3]),  # B.I.R.D. sabotaged: Dee wins 3 aiming for 2
    (("3/3", 3, 0), ("1/5", 1, 3), [3, 3, 3, 3, 3, 1]),  # B.I.R.D. accomplish 1/5
    (("3/3", 3, 2), ("3/3", 3, 1), [0, 2, 0, 2, 0, 2]),  # C.A.T. accomplish 3/3: the game is over
]
MISSION = re.compile(r"(C\.A\.T\.|B\.I\.R\.D\.): [^?]*\(\d/\d\)\?")


def team_label(state: dict[str, Any], first: int, tile: str, target: int) -> str:
    """The mission as the prompt shows it, from the team's first seat."""
    names = [p["name"] for p in state["players"]]
    team = state["teams"][0 if first == 0 else 1]["name"]
    a, b = parse_tile(tile)
    if a == b:
        return f"{team}: {names[first]} and {names[first + 2]} take {a} each ({tile})?"
    return f"{team}: {names[first]} takes {target}, {names[first + 2]} takes {a + b - target} ({tile})?"


def mission_by_buttons(client: Any, first: int, choice: tuple[str, int, int]) -> None:
    """Press the team's seat button until the prompt shows the mission, then hold it."""
    tile, target, seat = choice
    for _ in range(6):  # at most 5 missions to step through
        state = view(client)
        shown = MISSION.findall(state["prompt"]["text"])
        assert shown, state["prompt"]["text"]
        if team_label(state, first, tile, target) in state["prompt"]["text"]:
            break
        press(client, f"seat-{seat}")
    else:
        raise AssertionError(f"the buttons never showed {tile} for seat {first}")
    press(client, f"seat-{seat}", hold=True)


def mission_by_tablet(client: Any, first: int, choice: tuple[str, int, int]) -> None:
    post(client, "/api/actions", {"type": "mission", "seat": first, "tile": choice[0], "target": choice[1]})


def trick(client: Any, winner: int, seats: bool) -> None:
    state = view(client)
    for card in trick_cards(state, winner):
        body: dict[str, Any] = {"card": card}
        if seats:
            body["seat"] = view(client)["turn"]
        post(client, "/api/taps", body)


def spy_team_game(client: Any, mission: Callable[[Any, int, tuple[str, int, int]], None], seats: bool) -> Any:
    post(client, "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
    for cat, bird, winners in ROUNDS:
        mission(client, 0, cat)
        mission(client, 1, bird)
        assert view(client)["prompt"]["tap"] is True
        for winner in winners:
            trick(client, winner, seats)
    return view(client)


@pytest.mark.parametrize("seats", [False, True], ids=["one-reader", "seat-readers"])
def test_spy_team_is_played_with_cards_and_buttons_alone(table: Any, seats: bool) -> None:
    by_buttons = spy_team_game(table, mission_by_buttons, seats)
    assert by_buttons["status"] == "game-over" and by_buttons["winners"] == [0, 2]
    assert [(r["team"], r["tile"], r["outcome"]) for r in by_buttons["rounds"]] == [
        ("C.A.T.", "1/5", "sabotaged"),
        ("C.A.T.", "2/4", "sabotaged"),
        ("B.I.R.D.", "1/5", "accomplished"),
        ("C.A.T.", "3/3", "accomplished"),
    ]
    by_tablet = spy_team_game(table, mission_by_tablet, seats)
    assert by_tablet == by_buttons


# ------------------------------------------------------------------ Mission for Peanuts, over HTTP


class HttpGestures(GestureTable):
    """The seeded gesture game of tests/games/test_peanuts_table.py, each input also posted to a
    running daemon the way a table gives it: a tap to POST /api/taps, a seat button or Next to POST
    /api/buttons (through TableButtons). The engine's own copy follows along, so the game's choices
    can be read from it; the daemon's view must end the same."""

    def __init__(self, client: Any, players: int, seed: int, per_seat: bool) -> None:
        self.client = client
        self.route: tuple[str, dict[str, Any]] | None = None
        super().__init__(players, seed, per_seat=per_seat)
        started = {
            "game": "peanuts",
            "players": list(self.state.players),
            "options": {"start": self.state.turn},
        }
        assert client.post("/api/games", json=started, headers=AUTH).status_code == 201

    def tap(self, card: str, **fields: Any) -> None:
        self.route = ("/api/taps", {"card": card, **fields})
        super().tap(card, **fields)

    def press(self, button: int | str) -> None:
        self.route = ("/api/buttons", {"button": f"seat-{button}" if isinstance(button, int) else button})
        super().press(button)

    def send(self, event: dict[str, Any]) -> None:
        assert self.route is not None, f"{event} came neither from a tap nor from a button"
        (path, body), self.route = self.route, None
        answer = self.client.post(path, json=body, headers=AUTH)
        assert answer.status_code == 200, (body, answer.get_json())
        super().send(event)


@pytest.mark.parametrize(("players", "seed", "per_seat"), [(3, 13, False), (4, 24, True), (5, 35, False)])
def test_peanuts_games_through_taps_and_buttons_only(
    table: Any, players: int, seed: int, per_seat: bool
) -> None:
    game = HttpGestures(table, players, seed, per_seat)
    game.play()
    local = ENGINE.public_view(game.state)
    served = table.get("/api/state").get_json()
    assert served["status"] == "game-over" and len(local["rounds"]) > 1
    assert {key: served[key] for key in ("players", "rounds", "winners", "log")} == {
        key: local[key] for key in ("players", "rounds", "winners", "log")
    }
    assert game.kinds["tablet"] == 0 and game.kinds["button"] > 10
