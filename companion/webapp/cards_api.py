"""The card registry and enrollment over HTTP, for the control page (web/js/enroll.js).

Every call is a control call (`Authorization: Bearer <token>`). Errors are `{"error": "..."}`:
400 a malformed request, 404 no such card or tag, 409 a tag that belongs to another card,
503 a registry that cannot be written (damaged, a read-only disk: the message names the file and
the cause) or a daemon without one.

    GET    /api/cards                  per game: cards with / without a tag; every tag; the session
    POST   /api/cards/enroll           {"uid", "card", "force"?}: register one tag (an unknown tag's
                                       "enroll" button); 201, or 409 if it is another card's
    DELETE /api/cards/tags/<uid>       forget a tag
    GET    /api/cards/export           the registry as JSON (`companion cards export`)
    POST   /api/cards/import           an export; ?force=1 replaces conflicting tags
    POST   /api/cards/session          {"game", "missing"?, "force"?}: walk through a deck; while it
                                       runs the NFC readers enroll tags instead of playing them
    GET    /api/cards/session          its progress ({"session": null} when none runs)
    POST   /api/cards/session/tap      {"uid"}: a tag for the session, by its UID typed in (the
                                       virtual mat has no tags: it cannot enroll)
    POST   /api/cards/session/skip     leave the current card for later
    DELETE /api/cards/session          stop it (what was enrolled stays)

While a session runs, `POST /api/taps` (the virtual mat, or a script) is refused with 409: no tap
reaches the game during an enrollment, from a reader or from the page. (`GET /healthz` carries
`"registry"` from `Daemon.health`: "ok", "damaged: <file>: <cause>" or "read-only: ...". It does not
make `ok` false: the game still plays; `companion doctor` FAILs it.)
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from companion.readers.enrollment import CardDesk, EnrollError, VirtualTag
from companion.readers.registry import RegistryError, normalize_uid
from companion.webapp.api import BadRequest, control, error, json_body
from companion.webapp.services import services

cards_api = Blueprint("cards", __name__)


class Unavailable(Exception):
    pass


def desk() -> CardDesk:
    found = services().cards
    if found is None:
        raise Unavailable("This companion has no card registry.")
    return found


@cards_api.errorhandler(EnrollError)
def not_found(exc: EnrollError) -> tuple[Response, int]:
    return error(str(exc), 404)


@cards_api.errorhandler(Unavailable)
@cards_api.errorhandler(RegistryError)
def unavailable(exc: Exception) -> tuple[Response, int]:
    return error(str(exc), 503)


def text_field(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"'{key}' must be a non-empty string.")
    return value


def uid_field(body: dict[str, Any]) -> str:
    try:
        return normalize_uid(text_field(body, "uid"))
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc


def flag(body: dict[str, Any], key: str) -> bool:
    value = body.get(key, False)
    if not isinstance(value, bool):
        raise BadRequest(f"'{key}' must be true or false.")
    return value


@cards_api.get("/api/cards")
@control
def summary() -> Any:
    return jsonify(desk().summary())


@cards_api.post("/api/cards/enroll")
@control
def enroll() -> Any:
    body = json_body()
    result = desk().enroll(uid_field(body), text_field(body, "card"), force=flag(body, "force"))
    return jsonify(result.to_json()), 201 if result.status == "enrolled" else 409


@cards_api.delete("/api/cards/tags/<uid>")
@control
def forget(uid: str) -> Any:
    try:
        gone = desk().registry.forget(uid)
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
    if not gone:
        return error(f"Tag {uid} is not registered.", 404)
    return jsonify({"forgot": normalize_uid(uid)})


@cards_api.get("/api/cards/export")
@control
def export() -> Any:
    registry = desk().registry
    if registry.stand_in and registry.problem:  # an empty export would look like a lost deck
        raise Unavailable(f"The card registry cannot be read ({registry.problem}): nothing to export.")
    return jsonify(registry.export())


@cards_api.post("/api/cards/import")
@control
def import_() -> Any:
    cards = desk()
    known = {card for data in cards.catalog.values() for card in data.cards}
    force = request.args.get("force", "") in ("1", "true", "yes")
    try:
        report = cards.registry.import_(json_body(), force=force, known=known)
    except ValueError as exc:
        raise BadRequest(str(exc)) from exc
    return jsonify(report)


@cards_api.post("/api/cards/session")
@control
def start_session() -> Any:
    body = json_body()
    session = desk().start(text_field(body, "game"), missing=flag(body, "missing"), force=flag(body, "force"))
    return jsonify({"session": session.progress()}), 201


@cards_api.get("/api/cards/session")
@control
def session() -> Any:
    return jsonify({"session": desk().progress()})


@cards_api.post("/api/cards/session/tap")
@control
def session_tap() -> Any:
    cards = desk()
    result = cards.offer(VirtualTag(uid_field(json_body())))
    return jsonify({"result": result.to_json(), "session": cards.progress()})


@cards_api.post("/api/cards/session/skip")
@control
def session_skip() -> Any:
    cards = desk()
    current = cards.session
    if current is None:
        raise EnrollError("No enrollment is running.")
    result = current.skip()
    if current.finished:
        cards.release()
    return jsonify({"result": None if result is None else result.to_json(), "session": cards.progress()})


@cards_api.delete("/api/cards/session")
@control
def stop_session() -> Any:
    desk().stop()
    return jsonify({"session": None})
