"""The Flask application factory: the JSON API, the event stream and the pages in `web/`."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from flask import Flask, jsonify, request

from companion.core.resources import web_dir
from companion.games.catalog import GameData
from companion.games.packs import Pack
from companion.pins.buttons import TableButtons
from companion.readers.enrollment import CardDesk
from companion.table.table import Table
from companion.webapp.api import api
from companion.webapp.cards_api import cards_api
from companion.webapp.events import Broker
from companion.webapp.history import history
from companion.webapp.hotspot import hotspot_api, probe_allowed
from companion.webapp.pairing import Pairing
from companion.webapp.presentation import first_look, presentation
from companion.webapp.services import EXTENSION, Services
from companion.webapp.static import StaticFiles, compress_answer

if TYPE_CHECKING:
    from companion.network.hotspot import Hotspot

MAX_REQUEST_BYTES = 16 * 1024


def create_app(
    table: Table,
    broker: Broker,
    catalog: dict[str, GameData],
    token: str | None,
    health: Callable[[], dict[str, Any]] | None = None,
    hosts: Iterable[str] = (),
    cards: CardDesk | None = None,
    packs: Mapping[str, Pack] | None = None,
    pairing: Pairing | None = None,
    buttons: TableButtons | None = None,
    network: Hotspot | None = None,
) -> Flask:
    """Build the web application around a running table. Without a token every control call is
    refused, so a daemon started without one can be watched but not steered. Without `cards` the
    card registry's calls answer 503. `packs` are the games of COMPANION_GAME_PACKS
    (companion.games.packs). `buttons` the table's buttons, which `POST /api/buttons` pushes when
    they are on mock pins. `network` the access point's watcher ([network]), for the phones'
    connectivity probes and the control page's Wi-Fi QR code (companion.webapp.hotspot)."""
    web = web_dir()
    app = Flask(__name__, static_folder=None)
    # Read, hashed and gzipped once; the scoreboard arrives with its first look (companion.webapp.static).
    files = StaticFiles(web, first_looks={"scoreboard.html": first_look})
    app.json.sort_keys = False  # type: ignore[attr-defined]
    # Every input is journaled for good: no request may be bigger than a generous action.
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    app.extensions[EXTENSION] = Services(
        table,
        broker,
        catalog,
        token,
        health or (lambda: {}),
        cards,
        dict(packs or {}),
        pairing,
        buttons,
        network,
    )
    app.register_blueprint(api)
    app.register_blueprint(cards_api)
    app.register_blueprint(presentation)
    app.register_blueprint(history)
    app.register_blueprint(hotspot_api)
    _refuse_other_hosts(app, allowed_hosts(hosts))
    app.after_request(compress_answer)  # JSON answers: gzip and ETag (companion.webapp.static)
    _serve_pages(app, files)
    return app


# Each page of web/ and its address (the endpoint is the page's name).
PAGES = {
    "/": "scoreboard.html",
    "/control": "control.html",
    "/history": "history.html",
    "/pair": "pair.html",
}


def _serve_pages(app: Flask, files: StaticFiles) -> None:
    def static(filename: str) -> Any:
        return files.response(filename)

    def page_view(page: str) -> Callable[[], Any]:
        return lambda: files.response(page)

    app.add_url_rule("/static/<path:filename>", "static", static)
    for path, page in PAGES.items():
        app.add_url_rule(path, page.removesuffix(".html"), page_view(page))


def _refuse_other_hosts(app: Flask, allowed: frozenset[str]) -> None:
    @app.before_request
    def known_host() -> Any:
        """Against DNS rebinding: a page on another site that makes its name point at the table
        still sends that name as Host, and is refused here (pages, API and event stream alike)."""
        host = request.environ.get("HTTP_HOST")
        if host is None or host_allowed(host, allowed):
            return None
        # A phone on the table's access point asks connectivitycheck.gstatic.com & co.: those
        # paths only, and only while the access point is up (companion.webapp.hotspot).
        if probe_allowed(request.path, app.extensions[EXTENSION].network):
            return None
        message = (
            f"This table does not answer to the name {host!r}: use its address or a name in [server] hosts."
        )
        return jsonify({"error": message}), 421


def allowed_hosts(extra: Iterable[str] = ()) -> frozenset[str]:
    """The names the Host header may carry besides an IP literal: localhost, this machine's name
    and its mDNS name (name.local), and the names listed in the config."""
    name = socket.gethostname().lower()
    names = {"localhost", name, f"{name}.local", *(host.lower().rstrip(".") for host in extra)}
    return frozenset(names)


def host_allowed(host: str, allowed: frozenset[str]) -> bool:
    """Whether a Host header ("name", "name:port", "1.2.3.4:80", "[::1]:80") names this table."""
    name = host.strip().lower()
    if name.startswith("["):  # an IPv6 literal, with or without a port
        literal, bracket, _ = name[1:].partition("]")
        return bool(bracket) and _is_ip(literal)
    if name.count(":") == 1:
        name, _, port = name.partition(":")
        if not port.isdigit():
            return False
    name = name.rstrip(".")
    return _is_ip(name) or name in allowed


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
