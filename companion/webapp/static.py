"""The pages and their files, compressed once and cached by content (issue 12).

At start-up every file of `web/` is read once, hashed (SHA-256) and, if it is text, gzipped at the
best level. Then:
- a page (`/`, `/control`, `/pair`) names each of its files as `/static/<file>?v=<hash>`, so a file
  whose content changes gets a new URL;
- a file asked for with its current `v` is cached by the browser for a year (`immutable`): a reload
  fetches nothing but the page; without `v` (a renderer loaded by name) it is `no-cache`, answered
  304 while its ETag matches;
- a browser that accepts gzip gets the gzipped bytes (`Vary: Accept-Encoding`).

A page may carry its first look (issue 22): the scoreboard's `<!-- first look -->` becomes, per
request, its game's renderer (style sheet and deferred, render-blocking script, versioned) and the
data to draw the table's state at once, as JSON in a `<script type="application/json"
id="first-look">`, so the board needs no chain of fetches. `?first-look=0` serves the page without
it (the fetches of before, for the benchmark beside it). A page with its first look names its style
sheets as one file and its scripts as one (`bundle`: the files one after another, in the page's
order, versioned as any file): each file asked for is work for a new page before it can draw, and
each sheet that arrives on its own restyles it once more.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import mimetypes
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from flask import Response, request
from werkzeug.exceptions import NotFound

YEAR = 365 * 24 * 3600
TEXT_TYPES = ("text/", "application/javascript", "image/svg+xml", "application/json")
_REFERENCE = re.compile(r'(["\'])/static/([^"\'?#]+)\1')
FIRST_LOOK = "<!-- first look -->"
# A style sheet and a render-blocking script, as the pages write them and `page_with` adds them;
# `_OWN` finds those of this server's files (/static/, versioned), which may go into a bundle.
SHEET_TAG = '<link rel="stylesheet" href="{}">'
SCRIPT_TAG = '<script defer blocking="render" src="{}"></script>'
_OWN = r"/static/([^\"?]+)\?v=[0-9a-f]+"


@dataclass(frozen=True)
class Asset:
    body: bytes
    gzipped: bytes | None
    etag: str
    mimetype: str


@dataclass(frozen=True)
class Inline:
    """A page's first look: `data` inlined as JSON, the `scripts` and `styles` it needs loaded."""

    data: dict[str, Any]
    scripts: tuple[str, ...] = field(default=())
    styles: tuple[str, ...] = field(default=())


def inline_json(data: Any) -> str:
    """JSON to sit inside a `<script>` element: without "<", ">" or "&" (escaped as \\u003c...),
    which JSON has only inside strings, so no string (`</script>`, `<!--`) can end the element or
    change how the page parses it; U+2028 and U+2029 escaped too, for older parsers."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


class StaticFiles:
    """Every file under `root`, in memory, ready to serve. `first_looks` names the pages that
    carry a first look and what makes it (called per request)."""

    def __init__(self, root: Path, first_looks: Mapping[str, Callable[[], Inline]] | None = None) -> None:
        self.root = root
        self.first_looks = dict(first_looks or {})
        self.assets: dict[str, Asset] = {}
        self.bundles: dict[tuple[str, ...], str] = {}
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                self.assets[path.relative_to(root).as_posix()] = _asset(path.name, path.read_bytes())
        # Pages are served with their references versioned; they are rebuilt from the files above.
        for name in [name for name in self.assets if name.endswith(".html")]:
            text = self.assets[name].body.decode("utf-8")
            self.assets[name] = _asset(name, _REFERENCE.sub(self._versioned, text).encode("utf-8"))

    def _versioned(self, match: re.Match[str]) -> str:
        quote, name = match.group(1), match.group(2)
        asset = self.assets.get(name)
        if asset is None:
            return match.group(0)
        return f"{quote}/static/{name}?v={asset.etag}{quote}"

    def url(self, path: str) -> str:
        """`path` versioned if it is one of these files (/static/...), else as it is."""
        name = path.removeprefix("/static/")
        asset = self.assets.get(name) if name != path else None
        return path if asset is None else f"/static/{name}?v={asset.etag}"

    def page_with(self, name: str, inline: Inline) -> Asset:
        """Page `name` carrying `inline` at its `<!-- first look -->`."""
        tags = [SHEET_TAG.format(html.escape(self.url(url))) for url in inline.styles]
        # Render-blocking (as the page's own scripts): the first frame is the board, not an empty page.
        tags += [SCRIPT_TAG.format(html.escape(self.url(url))) for url in inline.scripts]
        tags.append(f'<script type="application/json" id="first-look">{inline_json(inline.data)}</script>')
        text = self.assets[name].body.decode("utf-8").replace(FIRST_LOOK, "\n  ".join(tags), 1)
        return _page_asset(name, self._bundled(self._bundled(text, SHEET_TAG), SCRIPT_TAG))

    def _bundled(self, text: str, tag: str) -> str:
        """`text` with the files its `tag`s name as one file, named where the first of them was;
        as it is if one of them is for another file (a game pack's renderer, at /packs/), which
        must keep its place in the order."""
        opening, closing = tag.split("{}")
        # Each tag on a line of its own (the pages' and `page_with`'s): the line goes with the tag.
        own = re.compile(r"(\n[ \t]*)" + re.escape(opening) + _OWN + re.escape(closing))
        found = list(own.finditer(text))
        if len(found) < 2 or text.count(opening) != len(found):
            return text
        bundle = tag.format(html.escape(self.bundle(tuple(match.group(2) for match in found))))
        first = found[0].start()
        return own.sub(lambda match: match.group(1) + bundle if match.start() == first else "", text)

    def bundle(self, names: tuple[str, ...]) -> str:
        """The versioned URL of one file that is the files `names` (all CSS or all scripts) one after
        another, made on first use and then served as any other file."""
        url = self.bundles.get(names)
        if url is None:
            body = b"\n".join(self.assets[name].body for name in names)
            kind = names[0].rsplit(".", 1)[-1]
            bundle = f"bundles/{hashlib.sha256(body).hexdigest()[:16]}.{kind}"
            self.assets.setdefault(bundle, _asset(bundle, body))
            url = self.bundles[names] = self.url(f"/static/{bundle}")
        return url

    def response(self, name: str) -> Response:
        """The answer to a GET of file `name` (a page, or a file under /static/)."""
        asset = self.assets.get(name)
        if asset is None:
            raise NotFound()
        look = self.first_looks.get(name)
        if look is not None and request.args.get("first-look") != "0":
            asset = self.page_with(name, look())
        if request.if_none_match.contains(asset.etag):
            response = Response(status=304)
        else:
            gzipped = asset.gzipped is not None and request.accept_encodings["gzip"] > 0
            body = asset.gzipped if gzipped and asset.gzipped is not None else asset.body
            response = Response(body, content_type=asset.mimetype)
            if gzipped:
                response.headers["Content-Encoding"] = "gzip"
        response.set_etag(asset.etag)
        response.headers["Vary"] = "Accept-Encoding"
        if request.args.get("v") == asset.etag and not name.endswith(".html"):
            response.headers["Cache-Control"] = f"public, max-age={YEAR}, immutable"
        else:
            response.headers["Cache-Control"] = "no-cache"
        return response


def _asset(name: str, body: bytes) -> Asset:
    mimetype = mimetypes.guess_type(name)[0] or "application/octet-stream"
    if mimetype.startswith("text/"):
        mimetype += "; charset=utf-8"
    gzipped = None
    if mimetype.startswith(TEXT_TYPES):
        packed = gzip.compress(body, compresslevel=9, mtime=0)
        gzipped = packed if len(packed) < len(body) else None
    return Asset(body, gzipped, hashlib.sha256(body).hexdigest()[:16], mimetype)


@lru_cache(maxsize=8)
def _page_asset(name: str, text: str) -> Asset:
    """A page with its first look, made once per table state (a tablet's reload, the next tablet)."""
    return _asset(name, text.encode("utf-8"))


COMPRESS_FROM = 1024  # bytes: smaller answers are not worth a gzip header


def compress_answer(response: Response) -> Response:
    """A JSON answer of the API, gzipped for a browser that takes it and made conditional on its
    ETag (`/api/games` is 190 KB of catalogue that never changes while the daemon runs: a reload
    gets a 304). Event streams and files are left alone (files are served above)."""
    if (
        request.method not in ("GET", "HEAD")
        or response.status_code != 200
        or response.direct_passthrough
        or response.is_streamed
        or response.mimetype != "application/json"
    ):
        return response
    body = response.get_data()
    response.set_etag(hashlib.sha256(body).hexdigest()[:16])
    if "Cache-Control" not in response.headers:  # an answer asked for by version may be kept
        response.headers["Cache-Control"] = "no-cache"
    response.headers["Vary"] = "Accept-Encoding"
    response.make_conditional(request)
    if response.status_code == 200 and len(body) >= COMPRESS_FROM and request.accept_encodings["gzip"] > 0:
        response.set_data(_gzipped(body))
        response.headers["Content-Encoding"] = "gzip"
    return response


@lru_cache(maxsize=8)
def _gzipped(body: bytes) -> bytes:
    """The same few answers (the catalogue, the current view) are asked for again and again."""
    return gzip.compress(body, compresslevel=6, mtime=0)
