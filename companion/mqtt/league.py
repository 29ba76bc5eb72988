"""`companion league`: standings across tables and nights, from the results tables publish to MQTT.

A process of its own: it subscribes to `<base>/+/result`, `<base>/+/status` and `<base>/+/state`,
keeps every result once (by its id: a result sent twice counts once, a retraction removes it) in
its own SQLite, and serves a read-only page and `GET /api/league`: standings, and ratings computed
afresh from every game in the order they were played (`ratings`). Its MQTT session is persistent,
so results published while it was stopped wait for it on the broker (docs/mqtt.md).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from flask import Flask, jsonify, request, send_from_directory

from companion.core.config import MqttSettings
from companion.core.resources import web_dir
from companion.mqtt.ratings import played_key, player_key, player_name, ratings

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    id         TEXT PRIMARY KEY,
    tbl        TEXT NOT NULL,
    game       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    started_at TEXT NOT NULL,
    payload    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tables (
    tbl    TEXT PRIMARY KEY,
    status TEXT NOT NULL DEFAULT 'offline',
    state  TEXT,
    seen   TEXT NOT NULL
);
"""


class LeagueStore:
    """The league's SQLite: results by id, and each table's last status and public view."""

    def __init__(self, path: Path | str) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)

    def record(self, result: dict[str, Any]) -> None:
        """Keep a result (the latest version of its id), or drop it if it was retracted. ValueError for
        a result whose players or winners are not lists of seats: the standings and ratings could
        not read it."""
        players, winners = result.get("players", []), result.get("winners", [])
        if not isinstance(players, list) or not all(isinstance(p, dict) for p in players):
            raise ValueError(f"result {result.get('id')}: players must be a list of seats")
        if not isinstance(winners, list):
            raise ValueError(f"result {result.get('id')}: winners must be a list of seats")
        with self._lock:
            if result.get("retracted"):
                self._db.execute("DELETE FROM results WHERE id = ?", (result["id"],))
                return
            self._db.execute(
                "INSERT INTO results (id, tbl, game, kind, started_at, payload) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET payload = excluded.payload",
                (
                    result["id"],
                    result["table"],
                    result["game"],
                    result["kind"],
                    result["started_at"],
                    json.dumps(result, sort_keys=True),
                ),
            )

    def table(self, table: str, status: str | None = None, state: dict[str, Any] | None = None) -> None:
        """Note a table's status ("online"/"offline") or its latest public view."""
        now = datetime.now().astimezone().isoformat(timespec="seconds")
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO tables (tbl, seen) VALUES (?, ?)", (table, now))
            if status is not None:
                self._db.execute("UPDATE tables SET status = ?, seen = ? WHERE tbl = ?", (status, now, table))
            if state is not None:
                self._db.execute(
                    "UPDATE tables SET state = ?, seen = ? WHERE tbl = ?", (json.dumps(state), now, table)
                )

    def results(self, kind: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT payload, kind FROM results ORDER BY started_at, id").fetchall()
        return [json.loads(text) for text, row_kind in rows if kind is None or row_kind == kind]

    def tables(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT tbl, status, state, seen FROM tables ORDER BY tbl").fetchall()
        return [
            _table_json(tbl, status, json.loads(state) if state else None, seen)
            for tbl, status, state, seen in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _table_json(table: str, status: str, view: dict[str, Any] | None, seen: str) -> dict[str, Any]:
    """A table as the league page shows it: online or not, and what it plays (its public view)."""
    view = view or {}
    players = [{"name": p.get("name"), "score": p.get("score")} for p in view.get("players", [])]
    return {
        "table": table,
        "online": status == "online",
        "seen": seen,
        "game": view.get("game"),
        "status": view.get("status"),
        "round": view.get("round"),
        "players": players,
    }


def night_of(started_at: str) -> str:
    """The night a game belongs to: the date it started, in the league's local time."""
    try:
        return datetime.fromisoformat(started_at).astimezone().date().isoformat()
    except ValueError:
        return started_at[:10]


def standings(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per game: each player's games played and won and points (the final scores), best first.
    A player is known by name across tables (`player_key`: case and spaces ignored), and spelt as
    in the first of these games they played."""
    spelt: dict[str, str] = {}
    by_game: dict[str, dict[str, dict[str, Any]]] = {}
    for result in games:
        rows = by_game.setdefault(result["game"], {})
        for player in result.get("players", []):
            key = player_key(player.get("name"))
            name = spelt.setdefault(key, player_name(player.get("name")))
            row = rows.setdefault(key, {"player": name, "played": 0, "won": 0, "points": 0})
            row["played"] += 1
            row["won"] += player.get("seat") in result.get("winners", [])
            score = player.get("score")
            row["points"] += score if isinstance(score, int) and not isinstance(score, bool) else 0
    return [
        {
            "game": game,
            "games": sum(1 for r in games if r["game"] == game),
            "players": sorted(
                rows.values(), key=lambda r: (-r["won"], -r["points"], r["played"], r["player"])
            ),
        }
        for game, rows in sorted(by_game.items())
    ]


def league_json(
    store: LeagueStore, night: str | None = None, titles: dict[str, str] | None = None
) -> dict[str, Any]:
    """What `GET /api/league` answers: standings (of one night, or of all), ratings (after that night:
    every game up to it), nights, tables, last games."""
    games = sorted(store.results("game"), key=played_key)  # by the instant each started
    nights = Counter(night_of(result["started_at"]) for result in games)
    chosen = [r for r in games if night is None or night_of(r["started_at"]) == night]
    table = standings(chosen)
    for entry in table:
        entry["title"] = (titles or {}).get(entry["game"], entry["game"])
    until = [r for r in games if night is None or night_of(r["started_at"]) <= night]
    return {
        "night": night,
        "nights": [{"night": n, "games": count} for n, count in sorted(nights.items(), reverse=True)],
        "standings": table,
        "ratings": ratings(until, titles),
        "tables": store.tables(),
        "recent": [_recent(r) for r in reversed(chosen[-10:])],
    }


def _recent(result: dict[str, Any]) -> dict[str, Any]:
    """A last game as the page lists it: where, when, and who won."""
    winners = result.get("winners", [])
    return {
        "id": result["id"],
        "table": result["table"],
        "game": result["game"],
        "started_at": result["started_at"],
        "winners": [p["name"] for p in result.get("players", []) if p.get("seat") in winners],
    }


class LeagueListener:
    """Subscribes to every table under `<base>` and stores what they publish."""

    def __init__(self, settings: MqttSettings, store: LeagueStore) -> None:
        from companion.mqtt.bridge import make_client

        self.settings, self.store = settings, store
        # A persistent session: the broker keeps results (QoS 1) for the league while it is away.
        client_id = f"companion-league-{settings.base.replace('/', '-')}"
        self.client = make_client(settings, client_id, persistent=True)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message

    def start(self) -> None:
        self.client.connect_async(self.settings.host, self.settings.port, keepalive=15)
        self.client.loop_start()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            log.warning("league: %s refused the connection: %s", self.settings.host, reason)
            return
        base = self.settings.base
        client.subscribe([(f"{base}/+/result", 1), (f"{base}/+/status", 1), (f"{base}/+/state", 0)])
        log.info("league: listening to %s/+ on %s:%s", base, self.settings.host, self.settings.port)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        table, leaf = message.topic.split("/")[-2:]
        try:
            if leaf == "status":
                self.store.table(table, status=message.payload.decode())
            elif leaf == "state":
                self.store.table(table, state=json.loads(message.payload))
            elif leaf == "result":
                self.store.record(json.loads(message.payload))
        except (ValueError, KeyError, TypeError, sqlite3.Error) as error:
            log.warning("league: ignored a bad message on %s: %s", message.topic, error)


def add_league_command(commands: Any) -> None:
    league = commands.add_parser(
        "league", help="standings and ratings across tables and nights, from an MQTT broker"
    )
    league.add_argument(
        "--config", type=Path, help="a TOML file whose [mqtt] names the broker and base topic"
    )
    league.add_argument(
        "--mqtt", metavar="URL", help="the broker, e.g. mqtt://127.0.0.1:1883 (instead of --config)"
    )
    league.add_argument("--base", help="the tables' base topic (default companion)")
    league.add_argument(
        "--db", type=Path, default=Path("league.db"), help="the league's SQLite (default ./league.db)"
    )
    league.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    league.add_argument("--port", type=int, default=8100, help="port of the league page (default 8100)")
    league.set_defaults(command=cmd_league)


def league_settings(args: Any) -> MqttSettings:
    """[mqtt] of --config, with --mqtt and --base over it."""
    from companion.core.config import ConfigError, load_config, parse_mqtt

    config = load_config(args.config) if args.config else None
    raw = _as_mqtt_table(config.mqtt) if config is not None and config.mqtt is not None else {}
    if args.mqtt:
        raw["url"] = args.mqtt
    if args.base:
        raw["base"] = args.base
    parsed = parse_mqtt({**raw, "table": "league"}, {}) if raw else None
    if parsed is None:
        raise ConfigError(
            "the league needs a broker: --mqtt mqtt://host:1883, or --config with an [mqtt] url"
        )
    return parsed


def _as_mqtt_table(settings: MqttSettings) -> dict[str, Any]:
    """A table's [mqtt] settings back as the [mqtt] table they were read from (its broker and login)."""
    raw = {"url": f"{'mqtts' if settings.tls else 'mqtt'}://{settings.host}:{settings.port}"}
    raw.update({k: v for k, v in vars(settings).items() if k in ("ca_file", "username", "password", "base")})
    return {k: v for k, v in raw.items() if v is not None}


def cmd_league(args: Any) -> int:
    import signal

    from waitress.server import create_server

    from companion.games.catalog import load_catalog

    settings = league_settings(args)
    store = LeagueStore(args.db)
    titles = {game: data.title for game, data in load_catalog().items()}
    listener = LeagueListener(settings, store)
    server: Any = create_server(create_league_app(store, titles), host=args.host, port=args.port, ident=None)
    listener.start()
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    print(f"League: {args.db}, broker {settings.host}:{settings.port}, topics {settings.base}/+", flush=True)
    print(f"  league page: http://{shown}:{args.port}/", flush=True)

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        listener.close()
        store.close()
    return 0


def create_league_app(store: LeagueStore, titles: dict[str, str] | None = None) -> Flask:
    """The league's read-only web: its page and `GET /api/league` (`?night=YYYY-MM-DD`)."""
    web = web_dir()
    app = Flask(__name__, static_folder=str(web), static_url_path="/static")
    app.json.sort_keys = False  # type: ignore[attr-defined]

    @app.get("/")
    def page() -> Any:
        return send_from_directory(web, "league.html")

    @app.get("/api/league")
    def api() -> Any:
        night = request.args.get("night") or None
        return jsonify(league_json(store, night, titles))

    return app
