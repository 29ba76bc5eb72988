"""The history of the table: past games from the journal, each folded with its engine into its final
public view (so only public facts: the view's log and summary, never a hidden card), with statistics
per player across games and exports. Open to read, like the scoreboard: `GET /history` (the page),
`GET /api/history` (JSON), `GET /api/history.csv` (one row per game) and
`GET /api/history/players.csv` (one row per player and game).
"""

from __future__ import annotations

import csv
import io
import logging
import threading
from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, current_app, jsonify

from companion.games.base import Engine, GameError
from companion.mqtt.league import standings
from companion.mqtt.ratings import player_key
from companion.mqtt.results import game_id
from companion.table.entries import GameLog
from companion.table.journal import Journal
from companion.webapp.services import services

log = logging.getLogger(__name__)

history = Blueprint("history", __name__)

CACHE = "companion-history"  # app.extensions key: each game's record, by its inputs in force
_CACHE_LOCK = threading.Lock()  # requests are served on several threads


def game_record(engine: Engine[Any], game: GameLog) -> dict[str, Any]:
    """One game of the history: who played, when, its rounds and winners, its log and summary,
    all from the public view its inputs make. Raises GameError if the rules refuse one of them."""
    start = game.start.event
    options = start.get("options")
    state = engine.setup(game.players, options if isinstance(options, dict) else {})
    for entry in game.entries[1:]:
        state, _ = engine.apply(state, entry.event)
    view = engine.public_view(state)
    names = [str(player["name"]) for player in view["players"]]
    return {
        "id": game_id(game.start),
        "game": game.game,
        "title": engine.title,
        "started_at": game.start.at,
        "last_input_at": game.entries[-1].at,
        "status": view["status"],
        "players": [
            {"seat": p["seat"], "name": p["name"], "score": p["score"], "won": p["seat"] in view["winners"]}
            for p in view["players"]
        ],
        "rounds": len(view.get("rounds", [])),
        "winners": [names[seat] for seat in view["winners"]],
        "summary": list(view.get("summary", [])),
        "log": list(view.get("log", [])),
        "board": results_board(view),
    }


# What a game's renderer needs of the final view to draw each round's result (`results(view)` in
# web/js/games/<game>.js) on the history page: the rounds, and who sat where. Public facts only.
PLAYER_KEYS = ("seat", "name", "score", "eliminated", "team", "out_reason")


def results_board(view: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a final public view that each round's result is drawn from."""
    return {
        "game": view.get("game"),
        "status": view.get("status"),
        "round": view.get("round"),
        "winners": list(view.get("winners", [])),
        "rounds": list(view.get("rounds", [])),
        "players": [{k: p[k] for k in PLAYER_KEYS if k in p} for p in view.get("players", [])],
        "teams": [{"name": t["name"], "seats": list(t["seats"])} for t in view.get("teams", [])],
    }


def game_records(
    journal: Journal, engines: Mapping[str, Engine[Any]], cache: dict[Any, Any]
) -> list[dict[str, Any]]:
    """Every game of the journal, newest first. A game whose engine is gone (a pack removed) or whose
    inputs the rules now refuse is left out, with a warning in the log. `cache` keeps each record
    by its inputs in force, so a page polled often folds only the game that changed."""
    records: list[dict[str, Any]] = []
    seen: set[Any] = set()
    for game in journal.games():
        engine = engines.get(game.game)
        if engine is None:
            continue
        key = (game.game, tuple(entry.seq for entry in game.entries))
        seen.add(key)
        if key not in cache:
            try:
                cache[key] = game_record(engine, game)
            except GameError as error:
                log.warning("history: game %s cannot be replayed: %s", game.start.seq, error)
                cache[key] = None
        if cache[key] is not None:
            records.append(cache[key])
    for stale in set(cache) - seen:  # a game that went on, or was undone: its old record goes
        del cache[stale]
    return records[::-1]


def player_statistics(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per player, known by name (case and spaces aside), across the finished games: played, won,
    and the same per game. Most wins first."""
    finished = [
        {"game": r["game"], "players": r["players"], "winners": [p["seat"] for p in r["players"] if p["won"]]}
        for r in records
        if r["status"] == "game-over"
    ]
    players: dict[str, dict[str, Any]] = {}
    for table in standings(finished):
        for row in table["players"]:
            total = players.setdefault(
                player_key(row["player"]), {"player": row["player"], "played": 0, "won": 0, "games": {}}
            )
            total["played"] += row["played"]
            total["won"] += row["won"]
            total["games"][table["game"]] = {"played": row["played"], "won": row["won"]}
    return sorted(players.values(), key=lambda p: (-p["won"], p["played"], p["player"].casefold()))


def _records() -> list[dict[str, Any]]:
    table = services().table
    with _CACHE_LOCK:
        cache = current_app.extensions.setdefault(CACHE, {})
        return game_records(table.journal, table.engines, cache)


def cell(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text: a name starting like a formula ("=1+2") is quoted."""
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@") else value


def csv_response(rows: list[list[Any]], name: str) -> Response:
    out = io.StringIO()
    csv.writer(out).writerows([[cell(value) for value in row] for row in rows])
    return Response(
        out.getvalue(),
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@history.get("/api/history")
def history_json() -> Any:
    records = _records()
    return jsonify({"games": records, "players": player_statistics(records)})


@history.get("/api/history.csv")
def history_csv() -> Response:
    rows: list[list[Any]] = [["id", "game", "started_at", "status", "players", "rounds", "winners"]]
    for r in _records():
        names = "; ".join(p["name"] for p in r["players"])
        rows.append(
            [r["id"], r["title"], r["started_at"], r["status"], names, r["rounds"], "; ".join(r["winners"])]
        )
    return csv_response(rows, "history.csv")


@history.get("/api/history/players.csv")
def players_csv() -> Response:
    rows: list[list[Any]] = [["player", "game", "played", "won"]]
    for player in player_statistics(_records()):
        rows.append([player["player"], "all", player["played"], player["won"]])
        rows += [
            [player["player"], game, g["played"], g["won"]] for game, g in sorted(player["games"].items())
        ]
    return csv_response(rows, "players.csv")
