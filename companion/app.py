"""The Flask application factory: the JSON API, the event stream and the pages in `web/`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, current_app, send_from_directory

from companion.catalog import GameData
from companion.events import Broker
from companion.resources import web_dir
from companion.table import Table

MAX_REQUEST_BYTES = 16 * 1024


@dataclass
class Services:
    """What the web layer talks to; kept on `app.extensions["companion"]`."""

    table: Table
    broker: Broker
    catalog: dict[str, GameData]
    token: str | None
    health: Callable[[], dict[str, Any]] = field(default=lambda: {})


def services() -> Services:
    return current_app.extensions["companion"]


def create_app(
    table: Table,
    broker: Broker,
    catalog: dict[str, GameData],
    token: str | None,
    health: Callable[[], dict[str, Any]] | None = None,
) -> Flask:
    """Build the web application around a running table. Without a token every control call is
    refused, so a daemon started without one can be watched but not steered."""
    from companion.api import api
    from companion.cards_api import cards_api  # the card registry and enrollment (control)

    web = web_dir()
    app = Flask(__name__, static_folder=str(web), static_url_path="/static")
    app.json.sort_keys = False  # type: ignore[attr-defined]
    # Every input is journaled for good: no request may be bigger than a generous action.
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    app.extensions["companion"] = Services(table, broker, catalog, token, health or (lambda: {}))
    app.register_blueprint(api)
    app.register_blueprint(cards_api)

    @app.get("/")
    def scoreboard() -> Any:
        return send_from_directory(web, "scoreboard.html")

    @app.get("/control")
    def control() -> Any:
        return send_from_directory(web, "control.html")

    return app
