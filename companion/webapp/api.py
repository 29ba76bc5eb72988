"""The JSON API of DESIGN.md section 3. Reads are open; control calls need the bearer token.

Every refusal is `{"error": "..."}` with a 4xx status, and nothing is journaled for it:
400 a malformed request (not a JSON object, a tap without a card, a key an action does not
declare), 401 a missing or wrong token, 404/405 no such call, 413 a body over 16 KiB, 409 an input
the table refuses (the rules, or a field with a wrong value).
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable, Iterator
from functools import wraps
from typing import Any, NoReturn

from flask import Blueprint, Response, jsonify, request, stream_with_context
from werkzeug.exceptions import BadRequest as NotJSON
from werkzeug.exceptions import HTTPException

from companion.games.base import GameError, MalformedInput
from companion.webapp.events import StreamRefused, refusal
from companion.webapp.pairing import CODE_SECONDS, COOKIE, COOKIE_SECONDS, Pairing, PairingError
from companion.webapp.server import connection_hooks
from companion.webapp.services import services

api = Blueprint("api", __name__)


def error(message: str, status: int) -> tuple[Response, int]:
    return jsonify({"error": message}), status


def control(view: Callable[..., Any]) -> Callable[..., Any]:
    """Guard a control call with `Authorization: Bearer <token>`."""

    @wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        token = services().token
        if not token:
            return error("Control is off: the daemon was started without a token.", 401)
        if paired_device():  # a device paired with a code (companion.webapp.pairing): no token sent
            return view(*args, **kwargs)
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            return error("This needs the table's token, or a device paired with `companion pair`.", 401)
        return view(*args, **kwargs)

    return guarded


def pairing() -> Pairing | None:
    return services().pairing


def paired_device() -> bool:
    found = pairing()
    return found is not None and found.knows(request.cookies.get(COOKIE))


def json_body() -> dict[str, Any]:
    """The request's JSON object; a malformed body is refused with an error cue on the table."""
    try:
        body = request.get_json(force=True)  # `curl -d` sends no JSON content type
    except (ValueError, RecursionError, NotJSON):  # not JSON, not UTF-8, nested too deep
        body = None
    message = "The request body must be a JSON object." if not isinstance(body, dict) else not_text(body)
    if message:
        malformed_request(message)
    return body  # type: ignore[no-any-return]


def not_text(body: dict[str, Any]) -> str | None:
    """Why a string of `body` (a field name or a value, at any depth) is not text, naming where it is;
    None when every one is. JSON may escape a lone UTF-16 surrogate (`"\\ud800"`), and Python's JSON
    reader lets the raw bytes ED A0 80 through as one too: no UTF-8 can carry it, so a later
    `.encode()` (a pairing code's, the journal's) would fail on it."""
    for where, text, is_name in _strings(body):
        if not _encodable(text):
            what = f"A field name in {where or 'the body'!r}" if is_name else f"{where!r}"
            return f"{what} is not valid text: it holds a lone surrogate, which UTF-8 cannot carry."
    return None


def _strings(body: Any) -> Iterator[tuple[str, str, bool]]:
    """Every string of a JSON value: (where, the string, whether it is a field name). `where` is
    `players[2]` or `options.start`; a field name's is the object that holds it, never the name itself."""
    pending: list[tuple[str, Any]] = [("", body)]
    while pending:  # not recursive: a body may be nested as deep as the JSON reader allows
        where, value = pending.pop()
        if isinstance(value, str):
            yield where, value, False
        elif isinstance(value, dict):
            for key, item in value.items():
                yield where, key, True
                pending.append((f"{where}.{key}" if where else key, item))
        elif isinstance(value, list):
            pending.extend((f"{where}[{index}]", item) for index, item in enumerate(value))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class BadRequest(Exception):
    pass


def malformed_request(message: str) -> NoReturn:
    """Refuse a request the table cannot read: the error cue on the table, then a 400 saying why."""
    services().table.report_error(message)
    raise BadRequest(message)


IDEMPOTENCY_KEY = re.compile(r"[\x20-\x7e]{1,64}")


def idempotency_key() -> str | None:
    """The request's `Idempotency-Key` (1-64 printable ASCII characters), None without one. A repeat
    with the same key gets the first answer and applies nothing again (see Table.submit)."""
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not IDEMPOTENCY_KEY.fullmatch(key):
        message = "Idempotency-Key must be 1 to 64 printable ASCII characters."
        malformed_request(message)
    return key


@api.app_errorhandler(BadRequest)  # the card registry's blueprint raises it too
def bad_request(exc: BadRequest) -> tuple[Response, int]:
    return error(str(exc), 400)


@api.errorhandler(GameError)
def refused(exc: GameError) -> tuple[Response, int]:
    return error(str(exc), 409)


@api.errorhandler(PairingError)
def not_saved(exc: PairingError) -> tuple[Response, int]:
    """A failing disk: the device is not paired (or not unpaired), and the code still works."""
    return error(str(exc), 503)


@api.errorhandler(MalformedInput)
def malformed(exc: MalformedInput) -> tuple[Response, int]:
    """An input no game state could read (a key its action does not declare): the table has already
    played the error cue."""
    return error(str(exc), 400)


@api.app_errorhandler(HTTPException)
def http_error(exc: HTTPException) -> Any:
    """404, 405, 413...: JSON like every other answer of the API (pages keep Flask's own)."""
    if not request.path.startswith("/api/") and request.path != "/healthz":
        return exc
    return error(exc.description or exc.name, exc.code or 500)


@api.get("/healthz")
def healthz() -> Any:
    table = services().table
    # Constant time, without the journal's lock: the integrity check ran when the journal was opened
    # (and runs in `companion doctor`); a probe here would read the whole file under the lock.
    journal = table.journal.integrity
    status = {"journal": journal, "game": table.game, **services().health()}
    # A journal that cannot take input (a read-only disk) is not a healthy table, even though it reads.
    status["ok"] = journal == "ok" and not status.get("journal_read_only", False)
    # A Raspberry Pi whose pins could not be opened (companion.pins.board): mock pins, loudly.
    status["ok"] = status["ok"] and not status.get("gpio_error")
    return jsonify(status), 200 if status["ok"] else 503


@api.get("/api/state")
def state() -> Any:
    return jsonify(services().table.view())


@api.get("/api/events")
def events() -> Response:
    """The live stream. Subscribe first, then read the view: an input landing in between is then
    queued for this client instead of lost (companion.webapp.events)."""
    svc = services()
    disconnected, close = connection_hooks(request.environ)
    try:
        client = svc.broker.subscribe(request.remote_addr or "", disconnected, close)
    except StreamRefused as refused:
        return event_stream(refusal(str(refused)))
    response = event_stream(svc.broker.stream(client, svc.table.view()))
    response.call_on_close(lambda: svc.broker.unsubscribe(client))  # even if it never started
    return response


def event_stream(stream: Iterator[str]) -> Response:
    return Response(
        stream_with_context(stream),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@api.post("/api/games")
@control
def start_game() -> Any:
    body, key = json_body(), idempotency_key()
    view = services().table.start(body.get("game"), body.get("players"), body.get("options"), key=key)  # type: ignore[arg-type]
    return jsonify(view), 201


@api.post("/api/actions")
@control
def act() -> Any:
    body, key = json_body(), idempotency_key()
    return jsonify(services().table.act(body, key=key))


@api.post("/api/undo")
@control
def undo() -> Any:
    return jsonify(services().table.undo(key=idempotency_key()))


@api.post("/api/taps")
@control
def tap() -> Any:
    """The virtual reader: exactly the path a physical tap takes. During an enrollment the table
    takes no tap: the readers hand their tags to the session, and the virtual mat (which has no tag
    to give) is refused."""
    cards = services().cards
    if cards is not None and cards.session is not None and not cards.session.finished:
        return error(
            f"An enrollment of {cards.session.data.title} is running: taps do not reach the game. "
            "Stop it in Cards and tags to play.",
            409,
        )
    body, key = json_body(), idempotency_key()
    card, uid, seat = body.get("card"), body.get("uid"), body.get("seat")
    if (card is None) == (uid is None):
        message = "A tap needs exactly one of 'card' (a card id) or 'uid' (a tag UID in hex)."
        malformed_request(message)
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)):
        malformed_request("'seat' must be a seat number.")
    if (card is not None and not isinstance(card, str)) or (uid is not None and not isinstance(uid, str)):
        malformed_request("'card' and 'uid' must be strings.")
    return jsonify(services().table.tap(card=card, uid=uid, seat=seat, key=key))


@api.post("/api/buttons")
@control
def press_button() -> Any:
    """The virtual buttons: exactly the path a GPIO press takes (`TableButtons.press` drives the mock
    pins), a press or a hold. Only for a table on mock pins: real buttons are pressed on the table."""
    buttons = services().buttons
    if buttons is None:
        return error("This table has no buttons.", 409)
    if not buttons.virtual:
        return error(
            "Real GPIO buttons drive this table: press them there. "
            "Virtual buttons are for a table on mock pins (the demo, the tests).",
            409,
        )
    body = json_body()
    name, hold = body.get("button"), body.get("hold", False)
    names = buttons.names()
    if name not in names:
        message = f"'button' must be one of {', '.join(names)}, not {name!r}."
        malformed_request(message)
    if not isinstance(hold, bool):
        malformed_request("'hold' must be true or false.")
    unknown = sorted(set(body) - {"button", "hold"})
    if unknown:
        message = f"A button press takes only 'button' and 'hold', not {', '.join(unknown)}."
        malformed_request(message)
    refusal = buttons.press(name, hold=hold)
    if refusal is not None:
        return error(refusal, 409)
    return jsonify(services().table.view())


# Pairing a control device (companion.webapp.pairing): the code is made on the Pi's side, typed on the device.


@api.post("/api/pairing")
@control
def new_pairing_code() -> Any:
    found = pairing()
    if found is None:
        return error("This companion cannot pair devices.", 404)
    return jsonify({"code": found.new_code(), "expires_in": CODE_SECONDS}), 201


@api.delete("/api/pairing")
@control
def forget_devices() -> Any:
    found = pairing()
    return jsonify({"forgot": 0 if found is None else found.forget_all()})


@api.get("/api/pair")
def paired() -> Any:
    return jsonify({"paired": paired_device()})


@api.post("/api/pair")
def pair() -> Any:
    """Typed on the control device: the code shown by `companion pair` (or in the system log)."""
    code = json_body().get("code")
    found = pairing()
    if not isinstance(code, str) or not code.strip():
        raise BadRequest("'code' must be the pairing code shown on the table (`companion pair`).")
    secret = None if found is None else found.pair(code)
    if secret is None:
        return error("Wrong or expired pairing code: run `companion pair` on the table for a new one.", 403)
    response = jsonify({"paired": True})
    response.set_cookie(COOKIE, secret, max_age=COOKIE_SECONDS, path="/", httponly=True, samesite="Strict")
    return response
