"""The scoreboard's sheets (and the control page's) keep to the type scale of app.css (issue 22):
every font-size a `var(--fs-N)` (N hundredths of a rem) or relative to its parent (em), every
weight 400 or 700.

Why it matters: a page's first frame waits for a font of each size and weight it shows, and a new
page asks the system for each one anew (docs/performance.md, "Fewer font sizes"): sixteen of them
took about half of the first layout of a Spy Team board at 4x CPU throttle. A size or weight off the
scale is one more."""

from __future__ import annotations

import re
from pathlib import Path

WEB = Path(__file__).parents[2] / "web" / "css"
SHEETS = [WEB / "app.css", WEB / "results.css", WEB / "control.css", *sorted((WEB / "games").glob("*.css"))]
RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
TOKEN = re.compile(r"var\(--fs-(\d+)\)")
SCALE_TOKEN = re.compile(r"--fs-(\d+):\s*([\d.]+)rem")
# A root's own size (the rem every size above is counted in) is the one size not on the scale.
ROOT = re.compile(r"^\s*(:root|html)\b")
FLOOR = re.compile(r"var\(--floor[^)]*\)")
# Peanuts' card figure is as big as its card is wide (a length, not a type size).
CARD_WIDE = "var(--cw,"


def declarations(text: str) -> list[tuple[str, str, str]]:
    """(selector, property, value) of every declaration of `text`, comments left out, @media
    blocks opened (their rules are read as any other)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"@media[^{]*\{", "", text)
    found = []
    for selector, body in RULE.findall(text):
        for part in body.split(";"):
            name, colon, value = part.partition(":")
            if colon:
                found.append((selector.strip(), name.strip(), value.strip()))
    return found


def scale(text: str) -> dict[int, float]:
    return {int(n): float(size) for n, size in SCALE_TOKEN.findall(text)}


def off_scale(text: str, steps: dict[int, float]) -> list[str]:
    """What in `text` is off the scale `steps`, one line each."""
    wrong = []
    for selector, name, value in declarations(text):
        if name == "font-weight" and value not in ("400", "700", "normal", "bold"):
            wrong.append(f"{selector}: font-weight {value}")
        if name != "font-size" or ROOT.match(selector) or CARD_WIDE in value:
            continue
        unknown = [int(n) for n in TOKEN.findall(value) if int(n) not in steps]
        sizes = FLOOR.sub("", TOKEN.sub("", value))  # the floor is a px size (18 on a 10" tablet) on purpose
        literal = re.search(r"(?<![\w-])[\d.]+(rem|px|pt|vw|vh|vmin|vmax)\b", sizes)
        if unknown or literal or ("var(--fs-" not in value and not value.endswith("em")):
            wrong.append(f"{selector}: font-size {value}")
    return wrong


def test_the_scale_names_its_sizes() -> None:
    steps = scale((WEB / "app.css").read_text())
    assert len(steps) >= 8
    assert all(size == n / 100 for n, size in steps.items()), steps


def test_every_sheet_of_the_scoreboard_keeps_to_the_scale() -> None:
    steps = scale((WEB / "app.css").read_text())
    wrong = {sheet.name: off_scale(sheet.read_text(), steps) for sheet in SHEETS}
    assert all(not lines for lines in wrong.values()), wrong
    used = {int(n) for sheet in SHEETS for n in TOKEN.findall(sheet.read_text())}
    assert used == set(steps), f"steps never used: {set(steps) - used}"


def test_the_check_finds_what_is_off_the_scale() -> None:
    steps = {100: 1.0, 140: 1.4}
    sheet = """
    html { font-size: clamp(11px, 2vh, 28px); }
    .fine { font-size: max(var(--fs-100), var(--floor)); font-weight: 700; }
    .kicker { font-size: .5em; }
    @media (orientation: portrait) { .literal { font-size: 1.3rem; } }
    .unknown { font-size: var(--fs-130); }
    .pixels { font-size: max(var(--fs-140), 19px); }
    .heavy { font-weight: 800; }
    """
    assert off_scale(sheet, steps) == [
        ".literal: font-size 1.3rem",
        ".unknown: font-size var(--fs-130)",
        ".pixels: font-size max(var(--fs-140), 19px)",
        ".heavy: font-weight 800",
    ]
