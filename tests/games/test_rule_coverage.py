"""Rules traced to tests: every rule id in docs/rules/*.md is cited by a test, and every id a test cites
is a rule there.

A rule is a line `- **[SPY-12]** ...` in a rules page (continued on the indented lines below it). A test
cites rules with `@pytest.mark.rule("SPY-12", ...)` (registered in pyproject.toml). A rule the companion
cannot check at all says so in its text with the tag `*Not checked by the companion: <why>*` and then
needs no test; that list is kept short.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules"
TESTS = ROOT / "tests"
PREFIXES = {"spy-team.md": "ST", "spy.md": "SPY", "peanuts.md": "PEA"}
RULE_LINE = re.compile(r"^- \*\*\[(?P<id>[A-Z]+-\d+)\]\*\*")
NOT_CHECKED = "*Not checked by the companion:"
MAX_NOT_CHECKED = 3  # anything more means tests are missing, not that rules cannot be tested


@dataclass(frozen=True)
class Rule:
    id: str
    page: str
    text: str

    @property
    def not_checked(self) -> bool:
        return NOT_CHECKED in self.text


def rules_in(page: str, text: str) -> list[Rule]:
    """The rules of one page: each `- **[ID]**` bullet with its indented continuation lines."""
    found: list[Rule] = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = RULE_LINE.match(line)
        if not match:
            continue
        body = [line]
        for more in lines[number + 1 :]:
            if not more.startswith("  "):
                break
            body.append(more.strip())
        found.append(Rule(match["id"], page, " ".join(body)))
    return found


def citations_in(source: str, where: str) -> list[tuple[str, str]]:
    """(id, test) for every `pytest.mark.rule(...)` in a test module's source."""
    cited: list[tuple[str, str]] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and ast.unparse(decorator.func) == "pytest.mark.rule":
                for arg in decorator.args:
                    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                        raise AssertionError(f"{where}::{node.name}: cite rule ids as plain strings")
                    cited.append((arg.value, f"{where}::{node.name}"))
    return cited


def all_rules() -> list[Rule]:
    return [rule for page in PREFIXES for rule in rules_in(page, (RULES / page).read_text())]


def all_citations() -> list[tuple[str, str]]:
    cited: list[tuple[str, str]] = []
    for module in sorted(TESTS.rglob("test_*.py")):
        cited += citations_in(module.read_text(), module.name)
    return cited


def problems(rules: list[Rule], cited: list[tuple[str, str]]) -> list[str]:
    """Everything wrong with the tracing, one sentence each (empty when all is well)."""
    found: list[str] = []
    known = {rule.id for rule in rules}
    for rule_id, count in Counter(rule.id for rule in rules).items():
        if count > 1:
            found.append(f"{rule_id} is defined {count} times")
    for rule in rules:
        if not rule.id.startswith(PREFIXES[rule.page] + "-"):
            found.append(f"{rule.id} in {rule.page} should start with {PREFIXES[rule.page]}-")
    cited_ids = {rule_id for rule_id, _ in cited}
    for rule_id, test in cited:
        if rule_id not in known:
            found.append(f"{test} cites {rule_id}, which no page in docs/rules defines")
    for rule in rules:
        if rule.not_checked and rule.id in cited_ids:
            found.append(f"{rule.id} is tagged not checked, yet a test cites it: drop the tag")
        if not rule.not_checked and rule.id not in cited_ids:
            found.append(f"{rule.id} ({rule.page}) is cited by no test")
    if sum(rule.not_checked for rule in rules) > MAX_NOT_CHECKED:
        found.append(f"more than {MAX_NOT_CHECKED} rules are tagged not checked")
    return found


def test_every_rule_has_a_test_and_every_cited_id_is_a_rule() -> None:
    assert problems(all_rules(), all_citations()) == []


def test_every_rulebook_has_its_rules() -> None:
    assert {page.name for page in RULES.glob("*.md")} == set(PREFIXES), "give a new page its prefix"
    counts = Counter(rule.page for rule in all_rules())
    assert set(counts) == set(PREFIXES) and min(counts.values()) >= 15


def test_a_rule_that_is_not_checked_says_why() -> None:
    for rule in all_rules():
        if rule.not_checked:
            why = rule.text.split(NOT_CHECKED, 1)[1].rstrip("*").strip()
            assert len(why) > 20, f"{rule.id}: say why the companion cannot check it"


def test_the_check_catches_every_kind_of_mistake() -> None:
    page = (
        "- **[ST-1]** Four players.\n"
        "- **[ST-2]** Partners sit apart,\n"
        "  and play clockwise.\n"
        "- **[ST-3]** Only at the table. *Not checked by the companion: nobody tells it.*\n"
        "- **[ST-3]** Defined twice.\n"
        "- **[SPY-4]** Wrong page.\n"
    )
    rules = rules_in("spy-team.md", page)
    assert [rule.id for rule in rules] == ["ST-1", "ST-2", "ST-3", "ST-3", "SPY-4"]
    assert rules[1].text.endswith("and play clockwise.") and rules[2].not_checked
    source = (
        "import pytest\n"
        '@pytest.mark.rule("ST-1", "ST-9")\n'
        "def test_a() -> None: ...\n"
        '@pytest.mark.rule("SPY-4")\n'
        "def test_b() -> None: ...\n"
    )
    cited = citations_in(source, "test_x.py")
    assert cited == [
        ("ST-1", "test_x.py::test_a"),
        ("ST-9", "test_x.py::test_a"),
        ("SPY-4", "test_x.py::test_b"),
    ]
    assert problems(rules, cited) == [
        "ST-3 is defined 2 times",
        "SPY-4 in spy-team.md should start with ST-",
        "test_x.py::test_a cites ST-9, which no page in docs/rules defines",
        "ST-2 (spy-team.md) is cited by no test",
        "ST-3 (spy-team.md) is cited by no test",
    ]
    assert problems(rules[:3], [("ST-1", "t"), ("ST-2", "t"), ("ST-3", "t")]) == [
        "ST-3 is tagged not checked, yet a test cites it: drop the tag"
    ]
    hidden = [Rule(f"ST-{n}", "spy-team.md", f"{NOT_CHECKED} the table only.*") for n in range(4)]
    assert problems(hidden, []) == [f"more than {MAX_NOT_CHECKED} rules are tagged not checked"]
