"""The table's own Wi-Fi on the web side: the phones' connectivity probes, and the access point's
status, hold and QR codes for the control page (docs/operations.md, "Its own Wi-Fi").

A phone that joins a Wi-Fi asks a well-known address whether it reaches the internet, and leaves a
Wi-Fi that does not answer as expected after a minute or so. On the table's access point those
names resolve to the table (systemd/companion-hotspot-dnsmasq.conf), so it answers each probe as the
real server would. The Host guard (companion.webapp.app) lets these paths, and only these, through
with a foreign Host, and only while the access point is up (`probe_allowed`).

`GET /api/hotspot` (control: it carries the password) answers the mode, hold, SSID, password and the
two QR codes as SVG data URIs: the Wi-Fi one, then the scoreboard's. `POST /api/hotspot {"hold":
"on"|"off"|"auto"}` (control) changes the hold, as `companion hotspot` does. Both answer 404 on a
table without [network], token or not.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import segno
from flask import Blueprint, Response, jsonify, request

from companion.network.wifi import SHARED_ADDRESS
from companion.webapp.api import control, error, json_body, malformed_request
from companion.webapp.services import services

if TYPE_CHECKING:
    from companion.network.hotspot import Hotspot

hotspot_api = Blueprint("hotspot", __name__)

APPLE = "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"
# path -> (status, body, content type): what each platform's own server answers
PROBES: dict[str, tuple[int, str, str]] = {
    "/generate_204": (204, "", "text/plain"),  # Android, Chrome
    "/gen_204": (204, "", "text/plain"),
    "/hotspot-detect.html": (200, APPLE, "text/html"),  # iOS, macOS
    "/library/test/success.html": (200, APPLE, "text/html"),
    "/connecttest.txt": (200, "Microsoft Connect Test", "text/plain"),  # Windows 10 and later
    "/ncsi.txt": (200, "Microsoft NCSI", "text/plain"),  # older Windows
    "/canonical.html": (  # Firefox
        200,
        '<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>',
        "text/html",
    ),
    "/success.txt": (200, "success\n", "text/plain"),  # Firefox
}


def probe_allowed(path: str, hotspot: Hotspot | None) -> bool:
    """Whether a request with a foreign Host may pass: a probe's path while the access point is up."""
    return path in PROBES and hotspot is not None and hotspot.up


def _probe(path: str) -> Any:
    def answer() -> Response:
        status, body, kind = PROBES[path]
        response = Response(body, status=status, content_type=f"{kind}; charset=utf-8")
        response.headers["Cache-Control"] = "no-store"  # a phone must never answer itself from a cache
        return response

    return answer


for _path in PROBES:
    hotspot_api.add_url_rule(_path, f"probe{_path.replace('/', '_').replace('.', '_')}", _probe(_path))


def with_network(view: Callable[[Hotspot], Any]) -> Callable[[], Any]:
    """404 on a table without [network], before the token is asked for (so that the control page
    hides its Wi-Fi panel there instead of asking for a token); then a control call."""
    guarded = control(view)

    @wraps(view)
    def answer() -> Any:
        hotspot: Hotspot | None = services().network
        if hotspot is None:
            return error("This table has no [network] in its config: no hotspot.", 404)
        return guarded(hotspot)

    return answer


@hotspot_api.get("/api/hotspot")
@with_network
def hotspot_status(hotspot: Hotspot) -> Any:
    status = hotspot.status()
    scoreboard = _scoreboard_url(status["mode"] == "hotspot")
    wifi = hotspot.qr_text()
    return jsonify(
        {
            **status,
            "password": hotspot.password,
            "wifi": wifi,
            "wifi_qr": segno.make(wifi, error="m").svg_data_uri(scale=6, border=2),
            "scoreboard": scoreboard,
            "scoreboard_qr": segno.make(scoreboard, error="m").svg_data_uri(scale=6, border=2),
        }
    )


def _scoreboard_url(on_hotspot: bool) -> str:
    """The scoreboard as the phones reach it: on the access point, NetworkManager's own address
    there; else the address this request came in by."""
    if not on_hotspot:
        return request.host_url
    port = urlsplit(request.host_url).port
    return f"http://{SHARED_ADDRESS}{f':{port}' if port else ''}/"


@hotspot_api.post("/api/hotspot")
@with_network
def hotspot_hold(hotspot: Hotspot) -> Any:
    hold = json_body().get("hold")
    if hold not in ("on", "off", "auto"):
        malformed_request('"hold" must be "on", "off" or "auto".')  # the error cue, then a 400
    return jsonify(hotspot.command(hold))
