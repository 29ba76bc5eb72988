"""What the pages show about the games, from the server only: GET /api/games gives every playable
game's data (title, players, new-game options, cards) and where its renderer is, and the cue
catalogue (banner, priority, page sound, LED and buzzer pattern). The pages keep no list of games or
cues of their own, so adding a game never touches them (docs/architecture.md, "Adding a game").
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, jsonify, send_file

from companion.catalog import GameData
from companion.cues import CUE_NAMES, CUE_STYLES, CueStyle
from companion.packs import Pack
from companion.patterns import PATTERNS, SILENT, Pattern
from companion.resources import web_dir
from companion.services import services

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


def game_json(data: GameData) -> dict[str, Any]:
    return {**data.to_json(), "renderer": renderer(data.game)}


def pattern_json(pattern: Pattern) -> dict[str, Any]:
    return {"sound": pattern.sound, "light": pattern.light, "tune": pattern.tune, "lights": pattern.lights}


def cue_catalogue() -> list[dict[str, Any]]:
    """Every cue: its name and meaning, how the pages present it and how the table's pins do."""
    return [
        {
            "cue": name,
            "meaning": meaning,
            **CUE_STYLES.get(name, CueStyle()).to_json(),
            "pins": pattern_json(PATTERNS.get(name, SILENT)),
        }
        for name, meaning in CUE_NAMES.items()
    ]


@presentation.get("/api/games")
def games() -> Any:
    return jsonify(
        {"games": [game_json(data) for data in services().catalog.values()], "cues": cue_catalogue()}
    )


@presentation.get("/packs/<game>.<kind>")
def pack_asset(game: str, kind: str) -> Any:
    """A pack game's renderer (see companion.packs)."""
    pack = packs().get(game)
    path = pack.asset(f".{kind}") if pack is not None and kind in ("js", "css") else None
    if path is None:
        abort(404)
    return send_file(path, max_age=0)
