"""Each game brought to a state worth looking at, through the HTTP API of a running companion: the
layout tests measure the pages in these states and `scripts/screens` photographs them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from tests.spy_team_play import trick_cards

Call = Callable[[str, str, Any], Any]
"""`call(method, path, body)` -> the JSON answer (tests.servers.Server.call)."""


def spy_team(call: Call) -> Iterator[str]:
    """Spy Team, 4 players: the first round just over (B.I.R.D. sabotaged), a trick under way, then a
    game B.I.R.D. sabotage three times."""
    call("POST", "/api/games", {"game": "spy-team", "players": ["Annabel", "Bartholomew", "Cid", "Dee"]})
    for cat_tile in ("1/5", "2/4", "3/3"):
        call(
            "POST",
            "/api/actions",
            {"type": "mission", "seat": 0, "tile": cat_tile, "target": int(cat_tile[0])},
        )
        call("POST", "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})
        for trick in range(2):
            cards = trick_cards(call("GET", "/api/state", None), winner=1)
            for number, card in enumerate(cards):
                call("POST", "/api/taps", {"card": card})
                if cat_tile == "2/4" and trick == 1 and number == 1:
                    yield "playing"
                if cat_tile == "1/5" and trick == 1 and number == 3:
                    yield "round-over"
    yield "game-over"


SPY_SCRIPT: list[dict[str, Any]] = [
    {"tap": "blue-spy", "seat": 2},
    {"tap": "green-spy"},
    {"tap": "purple-spy"},
    {"tap": "green-safe-1"},
    {"tap": "purple-bomb-1"},
    {"tap": "blue-safe-2"},
    {"tap": "green-safe-1"},
    {"tap": "purple-bomb-1"},  # BOOM: Ann is out
    {"type": "pass", "seat": 1},
    {"tap": "purple-safe-1"},
    {"type": "eliminate", "seat": 1},  # Bob drops a card: Cy wins
]


def spy(call: Call) -> Iterator[str]:
    """SPY, 3 players: a player just out (BOOM), then play going on, then the game's end."""
    call(
        "POST",
        "/api/games",
        {"game": "spy", "players": ["Annabel", "Bartholomew", "Cy"], "options": {"start": 2}},
    )
    for number, step in enumerate(SPY_SCRIPT):
        if "tap" in step:
            call(
                "POST",
                "/api/taps",
                {"card": f"spy/{step['tap']}", **{k: v for k, v in step.items() if k != "tap"}},
            )
        else:
            call("POST", "/api/actions", step)
        if number == 7:
            yield "out"
        if number == 8:
            yield "playing"
    yield "game-over"


def peanuts(call: Call, players: int = 5, seed: int = 1819) -> Iterator[str]:
    """Mission for Peanuts: the seeded table of tests/games/test_peanuts.py, its inputs posted one by one:
    the second round just dealt (the first one's result on the board), play under way, the game's end."""
    from tests.games.test_peanuts import NAMES, Table

    table = Table(players, seed)
    table.play()
    events = [entry.event for entry in table.log if entry.after is not None]
    start = table.log[0].before.start
    call("POST", "/api/games", {"game": "peanuts", "players": NAMES[:players], "options": {"start": start}})
    middle = len(events) // 2
    dealt = False
    for number, event in enumerate(events):
        body = {k: v for k, v in event.items() if k != "type"} if event["type"] == "tap" else event
        call("POST", "/api/taps" if event["type"] == "tap" else "/api/actions", body)
        if event["type"] == "next-round" and not dealt:
            dealt = True
            yield "round-over"
        if number == middle:
            yield "playing"
    yield "game-over"


GAMES: dict[str, Callable[[Call], Iterator[str]]] = {"spy-team": spy_team, "spy": spy, "peanuts": peanuts}
