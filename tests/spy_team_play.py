"""Scripted Spy Team play through the HTTP API, shared by the API, restart and browser tests."""

from __future__ import annotations

from typing import Any

from tests.conftest import AUTH


def post(client: Any, path: str, body: Any = None) -> Any:
    response = client.post(path, json=body, headers=AUTH)
    assert response.status_code in (200, 201), response.get_json()
    return response.get_json()


def choose(client: Any, cat_tile: str) -> None:
    """C.A.T. plays `cat_tile` (seat 0 the low number); B.I.R.D. plays 1/5 with seat 1 aiming for 1."""
    low = int(cat_tile.split("/")[0])
    post(client, "/api/actions", {"type": "mission", "seat": 0, "tile": cat_tile, "target": low})
    post(client, "/api/actions", {"type": "mission", "seat": 1, "tile": "1/5", "target": 1})


def trick_cards(view: dict[str, Any], winner: int, camouflage: bool = False) -> list[str]:
    """The four cards, in play order from the leader, of a trick that `winner` takes. Camouflage: all
    red, the winner the lowest. Otherwise the winner plays the highest unplayed red card, the leader
    (if someone else) the lowest red, everyone else a low blue card."""
    played = set(view["played"])
    reds = [n for n in range(1, 25) if f"spy-team/red-{n}" not in played]
    blues = [n for n in range(1, 25) if f"spy-team/blue-{n}" not in played]
    cards = []
    for step in range(4):
        seat = (view["turn"] + step) % 4
        if camouflage:
            cards.append(f"spy-team/red-{reds.pop(0) if seat == winner else reds.pop()}")
        elif seat == winner:
            cards.append(f"spy-team/red-{reds.pop()}")
        elif seat == view["turn"]:
            cards.append(f"spy-team/red-{reds.pop(0)}")
        else:
            cards.append(f"spy-team/blue-{blues.pop(0)}")
    return cards


def play_trick(client: Any, winner: int) -> dict[str, Any]:
    """Play one trick that `winner` takes (no Camouflage) through the test client; the last view."""
    view = client.get("/api/state").get_json()
    for card in trick_cards(view, winner):
        view = post(client, "/api/taps", {"card": card})
    return view


def sabotage_round(client: Any, cat_tile: str) -> dict[str, Any]:
    """A round that B.I.R.D. loses at once: seat 1, aiming for 1 trick, wins 2."""
    choose(client, cat_tile)
    play_trick(client, winner=1)
    return play_trick(client, winner=1)
