"""What the pages show about the games, from the server only: GET /api/games gives every playable
game's data (title, players, new-game options, cards) and where its renderer is, and the cue
catalogue (banner, priority, page sound, LED and buzzer pattern). The pages keep no list of games or
cues of their own, so adding a game never touches them (docs/architecture.md, "Adding a game").

The scoreboard shows one game and never the pins: it arrives with its first look (`first_look`,
inlined in the page by companion.webapp.static) and asks GET /api/games/<game> only for a game
started later, by the version the first look names (cached for good at that version).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Blueprint, abort, current_app, jsonify, request, send_file

from companion.core.cues import CUE_NAMES, CUE_STYLES, CueStyle
from companion.core.resources import web_dir
from companion.games.base import Engine
from companion.games.packs import Pack
from companion.pins.patterns import PATTERNS, SILENT, Pattern
from companion.webapp.services import services
from companion.webapp.static import YEAR, Inline

presentation = Blueprint("presentation", __name__)


def packs() -> dict[str, Pack]:
    return services().packs


def renderer(game: str) -> dict[str, str | None]:
    """The URLs of a game's renderer script and style sheet (None: it has none)."""
    pack = packs().get(game)
    if pack is not None:
        return {
            suffix[1:]: f"/packs/{game}{suffix}" if pack.asset(suffix) else None for suffix in (".js", ".css")
        }
    web = web_dir()
    return {
        "js": f"/static/js/games/{game}.js" if (web / "js" / "games" / f"{game}.js").is_file() else None,
        "css": f"/static/css/games/{game}.css" if (web / "css" / "games" / f"{game}.css").is_file() else None,
    }


def options_json(engine: Engine[Any]) -> list[dict[str, Any]]:
    """The new-game form's fields, as the engine declares them; a default that depends on the
    player count is given by count ({"3": 3, "4": 2}), one that does not as a value."""
    by_count = {n: engine.option_defaults(n) for n in engine.players}
    fields = []
    for option in engine.options:
        defaults = {str(n): found.get(option.name) for n, found in by_count.items()}
        values = set(defaults.values())
        default = defaults if len(values) > 1 else values.pop() if values else None
        fields.append({"name": option.name, "label": option.label, "type": option.kind, "default": default})
    return fields


def game_json(engine: Engine[Any]) -> dict[str, Any]:
    data = engine.data
    return {**data.to_json(), "options": options_json(engine), "renderer": renderer(data.game)}


def pattern_json(pattern: Pattern) -> dict[str, Any]:
    # Whole hertz and 10 µs steps are all a buzzer can do; full floats made one cue's 4,000-note hiss
    # 168 KB of every page's first load (the scoreboard's budget is 40 KB).
    tune = [(None if hz is None else round(hz), round(seconds, 5)) for hz, seconds in pattern.tune]
    return {"sound": pattern.sound, "light": pattern.light, "tune": tune, "lights": pattern.lights}


def cue_catalogue(pins: bool = True) -> list[dict[str, Any]]:
    """Every cue: its name and meaning, how the pages present it and (`pins`) how the table's pins do."""
    return [
        {
            "cue": name,
            "meaning": meaning,
            **CUE_STYLES.get(name, CueStyle()).to_json(),
            **({"pins": pattern_json(PATTERNS.get(name, SILENT))} if pins else {}),
        }
        for name, meaning in CUE_NAMES.items()
    ]


def page_cues() -> list[dict[str, Any]]:
    """The cue catalogue as the scoreboard uses it: without the pins' patterns (most of the
    catalogue's bytes: the buzzer tunes), which only the control page shows."""
    return cue_catalogue(pins=False)


def version(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


VERSIONS = "companion.game-versions"


def versions() -> dict[str, str]:
    """Each game's version, for GET /api/games/<game>?v=: made once per app, not on every page
    (its games, packs and renderer files are fixed when it starts, as the static files are)."""
    made: dict[str, str] | None = current_app.extensions.get(VERSIONS)
    if made is None:
        engines = services().table.engines
        made = current_app.extensions[VERSIONS] = {game: version(game_json(e)) for game, e in engines.items()}
    return made


def first_look() -> Inline:
    """What the scoreboard needs to draw the table on arrival, inlined in its page: the view the
    event stream sends first (the public view, the same object), the current game's presentation
    and renderer, the cues as pages show them, and each game's version for GET /api/games/<game>."""
    engines = services().table.engines
    view = services().table.view()
    shown = [game_json(engines[view["game"]])] if view.get("game") in engines else []
    data = {"view": view, "games": shown, "cues": page_cues(), "versions": versions()}
    scripts = tuple(game["renderer"]["js"] for game in shown if game["renderer"]["js"])
    styles = tuple(game["renderer"]["css"] for game in shown if game["renderer"]["css"])
    return Inline(data, scripts, styles)


@presentation.get("/api/games")
def games() -> Any:
    games = [game_json(engine) for engine in services().table.engines.values()]
    return jsonify({"games": games, "cues": cue_catalogue()})


@presentation.get("/api/games/<game>")
def one_game(game: str) -> Any:
    """One game's part of /api/games; asked for at its version (`?v=`), cached for a year."""
    engine = services().table.engines.get(game)
    if engine is None:
        abort(404, description=f"No game {game!r} here.")
    data = game_json(engine)
    response = jsonify(data)
    if request.args.get("v") == versions()[game]:
        response.headers["Cache-Control"] = f"public, max-age={YEAR}, immutable"
    return response


@presentation.get("/packs/<game>.<kind>")
def pack_asset(game: str, kind: str) -> Any:
    """A pack game's renderer (see companion.games.packs)."""
    pack = packs().get(game)
    path = pack.asset(f".{kind}") if pack is not None and kind in ("js", "css") else None
    if path is None:
        abort(404)
    return send_file(path, max_age=0)
