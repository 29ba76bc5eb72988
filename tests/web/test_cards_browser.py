"""The enrollment panel (web/js/enroll.js) on the control page, in a real browser: an unknown tag
shows up with its UID and is enrolled with a click; a deck is walked through with its progress."""

from __future__ import annotations

import re
import urllib.error
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.servers import TOKEN, Server, running_companion

UID = "04a1b2c3d4e5f6"


def test_enroll_an_unknown_tag_and_walk_a_deck_from_the_tablet(browser: Browser, server: Server) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    asked: list[str] = []
    page.on("request", lambda request: asked.append(f"{request.method} {request.url}"))
    page.goto(f"{server.url}/control#token={TOKEN}")
    live(page)
    panel = page.locator("#enroll")
    spy_team = panel.locator('.enroll-game[data-game="spy-team"]')
    expect(spy_team).to_contain_text("0/48 cards have a tag")

    # A tag nobody enrolled is tapped (the virtual mat's path): the panel lists its UID.
    with pytest.raises(urllib.error.HTTPError) as refused:
        server.call("POST", "/api/taps", {"uid": UID})
    assert refused.value.code == 409
    row = panel.locator(f'.enroll-unknown[data-uid="{UID}"]')
    expect(row).to_contain_text(UID)
    row.locator("select.enroll-pick-card").select_option("spy-team/red-1")
    row.get_by_role("button", name="Enroll").click()
    expect(row).to_have_count(0)
    expect(spy_team).to_contain_text("1/48 cards have a tag")
    assert server.call("GET", "/api/cards")["tags"][0]["card"] == "spy-team/red-1"

    # The deck, missing cards only (ticked by default once some have a tag).
    spy_team.get_by_role("button", name="Enroll deck").click()
    # (No NFC reader here: the panel asks for each tag's UID.)
    expect(panel.locator(".enroll-session")).to_contain_text("Type the UID of Red 2")
    expect(panel.locator(".enroll-session")).to_contain_text("0/47")
    # A tag typed in elsewhere: the panel hears of it on the event stream (its cue), not by polling.
    server.call("POST", "/api/cards/session/tap", {"uid": "04a1b2c3d4e5f7"})
    expect(panel.locator(".enroll-session")).to_contain_text("Type the UID of Red 3")
    expect(panel.locator(".enroll-session")).to_contain_text("1/47")
    expect(panel.locator(".enroll-session progress")).to_have_attribute("value", "1")
    server.call("POST", "/api/cards/session/tap", {"uid": "04a1b2c3d4e5f8"})  # and the next one
    expect(panel.locator(".enroll-session")).to_contain_text("Type the UID of Red 4")
    expect(panel.locator(".enroll-session")).to_contain_text("2/47")
    assert not [line for line in asked if line.startswith("GET") and "/api/cards/session" in line]
    panel.get_by_role("button", name="Stop").click()
    expect(panel.locator(".enroll-session")).to_have_count(0)
    expect(spy_team).to_contain_text("3/48 cards have a tag")
    assert errors == []


def live(page: Page) -> None:
    """Wait until the page's event stream brought its first state: the cues of what the test does
    next reach the page (one sent before the stream is open is heard by nobody)."""
    expect(page.locator("body[data-status]")).to_be_attached()


def control_page(browser: Browser, server: Server, width: int = 1280) -> tuple[Page, list[str]]:
    """The control page with its token; counts the event streams it opens; collects page errors."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(
        "window.streams = 0; const Original = window.EventSource;"
        "window.EventSource = function (...args) { window.streams += 1; return new Original(...args); };"
    )
    page.goto(f"{server.url}/control#token={TOKEN}")
    expect(page.locator('#enroll .enroll-game[data-game="spy-team"]')).to_be_visible()
    live(page)
    return page, errors


def tap_unknown(server: Server, uid: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        server.call("POST", "/api/taps", {"uid": uid})
    assert refused.value.code == 409


def test_the_panels_messages_are_seen_and_an_enrolled_tags_notice_goes(
    browser: Browser, server: Server
) -> None:
    page, errors = control_page(browser, server)
    bar, panel = page.locator("#message"), page.locator("#enroll")
    # A refusal: the tag became Red 2 meanwhile (an import: no cue), the host picks Red 1.
    tap_unknown(server, UID)
    row = panel.locator(f'.enroll-unknown[data-uid="{UID}"]')
    expect(bar).to_contain_text(f"Unknown tag {UID}")
    server.call("POST", "/api/cards/import", {"version": 1, "tags": [{"uid": UID, "card": "spy-team/red-2"}]})
    row.locator("select.enroll-pick-card").select_option("spy-team/red-1")
    row.get_by_role("button", name="Enroll").click()
    expect(bar).to_contain_text("This tag is already spy-team/red-2")
    expect(bar).to_be_visible()
    expect(bar).to_have_class(re.compile(r"\bshow\b"))
    expect(row).to_have_count(0)  # the refresh after it: the tag is known now

    # A success is said too.
    other = "04a1b2c3d4e5f8"
    tap_unknown(server, other)
    panel.locator(f'.enroll-unknown[data-uid="{other}"]').get_by_role("button", name="Enroll").click()
    expect(bar).to_contain_text("Red 1: UID registered.")
    expect(bar).to_be_visible()

    # A tag enrolled elsewhere (another page, the command line's API twin): its row and notice go.
    third = "04a1b2c3d4e5f9"
    tap_unknown(server, third)
    expect(bar).to_contain_text(f"Unknown tag {third}")
    expect(panel.locator(f'.enroll-unknown[data-uid="{third}"]')).to_have_count(1)
    server.call("POST", "/api/cards/enroll", {"uid": third, "card": "spy-team/red-3"})
    expect(panel.locator(f'.enroll-unknown[data-uid="{third}"]')).to_have_count(0)
    expect(bar).to_be_hidden()
    assert page.evaluate("window.streams") == 1  # the panel listens to the page's stream
    assert errors == []


def test_an_unknown_tag_is_offered_the_cards_of_the_game_being_played(
    browser: Browser, server: Server
) -> None:
    page, errors = control_page(browser, server)
    server.call("POST", "/api/games", {"game": "spy", "players": ["Ann", "Bob", "Cy"]})
    expect(page.locator("#mat button").first).to_be_visible()
    tap_unknown(server, UID)
    row = page.locator(f'#enroll .enroll-unknown[data-uid="{UID}"]')
    expect(row.locator("select.enroll-pick-game")).to_have_value("spy")
    cards = row.locator("select.enroll-pick-card option")
    expect(cards).to_have_count(30)
    assert all(value.startswith("spy/") for value in cards.evaluate_all("os => os.map(o => o.value)"))
    row.locator("select.enroll-pick-game").select_option("spy-team")  # the others are one choice away
    expect(cards).to_have_count(48)
    row.locator("select.enroll-pick-card").select_option("spy-team/blue-24")
    row.get_by_role("button", name="Enroll").click()
    expect(page.locator("#message")).to_contain_text("Blue 24: UID registered.")
    assert server.call("GET", "/api/cards")["tags"][0]["card"] == "spy-team/blue-24"
    assert errors == []


def test_without_an_nfc_reader_a_deck_is_enrolled_by_typing_uids_and_the_mat_is_off(
    browser: Browser, server: Server
) -> None:
    page, errors = control_page(browser, server)
    server.call("POST", "/api/games", {"game": "spy-team", "players": ["Ann", "Bob", "Cid", "Dee"]})
    mat, panel = page.locator("#mat"), page.locator("#enroll")
    expect(mat.locator("button").first).to_be_visible()
    expect(panel).to_contain_text("No NFC reader is attached")
    panel.locator('.enroll-game[data-game="spy-team"]').get_by_role("button", name="Enroll deck").click()
    session = panel.locator(".enroll-session")
    expect(session).to_contain_text("Type the UID of Red 1")
    expect(session).to_contain_text("the virtual mat has no tags")
    # The mat is off, saying why: it would play into the game, and it has no tag to enroll.
    expect(mat.locator("button")).to_have_count(0)
    expect(mat).to_contain_text("Off while Spy Team is being enrolled")
    session.get_by_label("Tag UID").fill("04:A1:B2:C3:D4:E5:F6")
    session.get_by_role("button", name="Enroll this UID").click()
    expect(session).to_contain_text("Type the UID of Red 2")
    expect(session).to_contain_text("1/48")
    expect(page.locator("#message")).to_contain_text("Red 1: UID registered.")
    assert server.call("GET", "/api/state")["played"] == []
    session.get_by_role("button", name="Stop").click()
    expect(session).to_have_count(0)
    expect(mat.locator("button").first).to_be_visible()
    assert errors == []


# Per label of a game row: its checkbox's box, its words' boxes (one per line), and the label's own.
LABEL_GEOMETRY = """labels => labels.map((label) => {
  const box = (r) => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
  const text = [...label.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
  const range = document.createRange();
  range.selectNodeContents(text);
  return {check: box(label.querySelector("input").getBoundingClientRect()),
    words: [...range.getClientRects()].map(box), label: box(label.getBoundingClientRect())};
})"""


@pytest.mark.parametrize("width", [1280, 800, 390])
def test_the_panel_fits_and_each_checkbox_sits_beside_its_words(
    browser: Browser, server: Server, width: int
) -> None:
    page, errors = control_page(browser, server, width)
    tap_unknown(server, UID)
    expect(page.locator(f'#enroll .enroll-unknown[data-uid="{UID}"]')).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
    for row in page.locator("#enroll .enroll-game").all():
        labels = row.locator("label").evaluate_all(LABEL_GEOMETRY)
        for label in labels:
            check, words = label["check"], label["words"]
            assert len(words) == 1, label  # the words on one line
            middle = (check["top"] + check["bottom"]) / 2
            assert words[0]["top"] <= middle <= words[0]["bottom"], label  # beside them, not above
            assert check["right"] <= words[0]["left"], label  # before them
            assert words[0]["right"] <= label["label"]["right"] + 1, label  # inside the label
        first, second = (label["words"][0] for label in labels)
        apart = first["right"] <= second["left"] or first["bottom"] <= second["top"]
        assert apart, labels  # "only missing" and "force" do not overlap
        button = row.get_by_role("button", name="Enroll deck").bounding_box()
        assert button and button["x"] >= 0 and button["x"] + button["width"] <= width
    assert errors == []


def test_a_damaged_registry_is_said_in_the_panel(browser: Browser, tmp_path: Path) -> None:
    (tmp_path / "cards.db").write_text("garbage\n")
    with running_companion(tmp_path / "journal.db") as damaged:
        page, errors = control_page(browser, damaged)
        note = page.locator("#enroll .enroll-note.bad")
        expect(note).to_be_visible()
        expect(note).to_contain_text(
            f"the card registry is damaged: {tmp_path / 'cards.db'}: file is not a database"
        )
        expect(page.locator("#enroll").get_by_role("button", name="Enroll deck").first).to_be_disabled()
        assert errors == []
