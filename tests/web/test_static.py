"""Issue 12 item 6: the pages' files compressed, named by content and cached for long; a reload of
the scoreboard fetches nothing but the page."""

from __future__ import annotations

import gzip
import hashlib
import re
from typing import Any

from companion.core.resources import web_dir


def test_pages_name_their_files_by_content_and_those_are_cached_for_a_year(client: Any) -> None:
    page = client.get("/", headers={"Accept-Encoding": "identity"})
    assert page.status_code == 200 and page.headers["Cache-Control"] == "no-cache"
    references = re.findall(r'"(/static/[^"]+)"', page.get_data(as_text=True))
    assert references and all("?v=" in reference for reference in references)
    for reference in references:
        response = client.get(reference)
        assert response.status_code == 200, reference
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        name = reference.split("?")[0].removeprefix("/static/")
        # A bundle is files one after another (tests/web/test_first_look.py), named by its content.
        if name.startswith("bundles/"):
            assert name.split("/")[1].split(".")[0] == hashlib.sha256(response.get_data()).hexdigest()[:16]
        else:
            assert response.get_data() == (web_dir() / name).read_bytes()


def test_text_is_gzipped_for_a_browser_that_takes_it(client: Any) -> None:
    plain = client.get("/static/js/common.js", headers={"Accept-Encoding": "identity"})
    packed = client.get("/static/js/common.js", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert packed.headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.get_data()) == plain.get_data()
    assert len(packed.get_data()) < len(plain.get_data()) / 2
    assert "Content-Encoding" not in plain.headers


def test_an_unversioned_file_is_revalidated_by_its_etag(client: Any) -> None:
    first = client.get("/static/js/common.js")
    assert first.headers["Cache-Control"] == "no-cache" and first.headers["ETag"]
    again = client.get("/static/js/common.js", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.get_data() == b""
    stale = client.get("/static/js/common.js?v=0123456789abcdef")
    assert stale.status_code == 200 and stale.headers["Cache-Control"] == "no-cache"


def test_unknown_files_and_paths_outside_web_are_404(client: Any) -> None:
    for path in ["/static/nope.js", "/static/../companion/app.py", "/static/%2e%2e/pyproject.toml"]:
        assert client.get(path).status_code == 404, path


def test_the_catalogue_is_gzipped_and_a_reload_gets_a_304(client: Any) -> None:
    """/api/games, every page's first request, was 190 KB sent in full on every load."""
    plain = client.get("/api/games")
    assert "Content-Encoding" not in plain.headers  # a client that did not ask for gzip
    packed = client.get("/api/games", headers={"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.get_data()) == plain.get_data()
    assert len(packed.get_data()) < 24 * 1024
    again = client.get(
        "/api/games", headers={"If-None-Match": packed.headers["ETag"], "Accept-Encoding": "gzip"}
    )
    assert again.status_code == 304 and again.get_data() == b""
    events = client.get("/api/events", headers={"Accept-Encoding": "gzip"}, buffered=False)
    assert "Content-Encoding" not in events.headers  # a stream is never buffered to be compressed
    events.close()
