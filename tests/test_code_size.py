"""How large a piece of companion/ may grow, kept true here (docs/architecture.md, "House rules"):

- a module: 500 lines at most;
- a function or method: 60 lines at most, from its `def` to its last line;
- a function's cyclomatic complexity: 12 at most, counted by radon, which counts every branch, loop,
  `except`, boolean operator, conditional expression and each `for` and `if` of a comprehension.
  ruff's C901 (also 12, in pyproject.toml) leaves the last three out, which is how a function with
  three comprehensions and a few `or`s passed it at 18.

A piece over a limit is split where the game or the domain splits it, not cut in half.
"""

from __future__ import annotations

import ast
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted((ROOT / "companion").rglob("*.py"))
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_COMPLEXITY = 12


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_no_module_is_over_500_lines() -> None:
    long = {
        _name(path): n for path in MODULES if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{_name(path)}:{node.lineno} {node.name}"] = lines
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def _functions(code: str) -> list[Function]:
    found: list[Function] = []
    for block in cc_visit(code):
        found.extend(block.methods if hasattr(block, "methods") else [block])
    return found


def test_no_function_is_over_complexity_12() -> None:
    complex_ = {
        f"{_name(path)}:{function.lineno} {function.fullname}": function.complexity
        for path in MODULES
        for function in _functions(path.read_text())
        if function.complexity > MAX_COMPLEXITY
    }
    assert not complex_, f"functions over complexity {MAX_COMPLEXITY} (radon): {complex_}"


def test_the_measures_see_what_they_limit() -> None:
    """The complexity measure, on functions built to break it, finds them; and the tests read the
    whole package, so none of the three can pass by reading nothing."""
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(13))
    assert max(f.complexity for f in _functions(f"def f(x):\n{branches}\n")) == 14
    hidden = "def f(xs):\n    return [x for x in xs if x] or [y for y in xs if y] or (1 if xs else 2)\n"
    assert _functions(hidden)[0].complexity == 8  # ruff's C901 counts it 1
    assert len(MODULES) > 50 and any(path.name == "journal.py" for path in MODULES)
