"""Finished rounds and games, read off the public view: what a table tells a league.

Every game's public view lists its finished `rounds`, and its `winners` once `status` is
"game-over" (DESIGN.md section 3), so results need no code per game. Each result has an id made of
the table, the game and the round, stable across restarts: the game is named by the journal entry
that started it (its sequence number and time), so a replay, a crash or a duplicate publish always
gives the same id and a consumer keeps one copy.

Pure: no I/O, no clock. Only what the public view shows goes into a result.
"""

from __future__ import annotations

from typing import Any

from companion.table.entries import Entry


def game_id(start: Entry) -> str:
    """The game started by journal entry `start`, e.g. "2026-11-30T20:15:02.120+00:00#42". The time
    keeps games apart when a journal is replaced and its sequence numbers start again."""
    return f"{start.at}#{start.seq}"


def result_id(table: str, game: str, round_number: int | None) -> str:
    """The id of a round's result, or of the game's (`round_number` None)."""
    return f"{table}/{game}/{'game' if round_number is None else f'round-{round_number}'}"


def results_of(table: str, start: Entry | None, view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every result the view shows, by id: one per finished round, and one for the game once it is
    over. Nothing in them changes unless the game does (an undo), so two calls on one view agree."""
    if start is None or view.get("game") is None:
        return {}
    game = game_id(start)
    common = {
        "table": table,
        "game": view["game"],
        "game_id": game,
        "started_at": start.at,
        "players": [_player(p) for p in view.get("players", [])],
    }
    results: dict[str, dict[str, Any]] = {}
    for finished in view.get("rounds", []):
        number = finished.get("round")
        if not isinstance(number, int):
            continue
        rid = result_id(table, game, number)
        results[rid] = {"id": rid, "kind": "round", **common, "round": number, "detail": dict(finished)}
        results[rid]["winners"] = list(finished.get("winners", []))
    if view.get("status") == "game-over":
        rid = result_id(table, game, None)
        results[rid] = {"id": rid, "kind": "game", **common, "round": None, "winners": list(view["winners"])}
    # A round's scores are the ones after it, and only the last one's are known now: the players'
    # scores go with the game's result, the rounds keep their names alone.
    for result in results.values():
        if result["kind"] == "round":
            result["players"] = [{"seat": p["seat"], "name": p["name"]} for p in result["players"]]
    return results


def retraction(result: dict[str, Any]) -> dict[str, Any]:
    """What replaces a published result that an undo took back: same id, `retracted` true."""
    keep = ("id", "kind", "table", "game", "game_id", "started_at", "round")
    return {**{key: result[key] for key in keep}, "retracted": True}


def _player(player: dict[str, Any]) -> dict[str, Any]:
    return {"seat": player.get("seat"), "name": player.get("name"), "score": player.get("score", 0)}
