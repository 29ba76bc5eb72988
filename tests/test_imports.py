"""How companion/'s modules may import each other.

No import cycle: each module's imports of other companion modules form a graph with no loop, so
every module can be read (and imported) after the ones it uses. Counted: every `import companion.x`
and `from companion.x import y` (and relative imports) anywhere in a module, inside functions too: a
function-level import only moves a cycle to run time. Not counted: imports under `if TYPE_CHECKING:`,
which never run and exist only for type hints. Importing `companion.a.b` counts as an edge to
`companion.a.b` only, not to the package `companion.a` that Python initialises first: a package's
`__init__` may import its own submodules. But `from companion.a import b` reads `companion.a`'s
namespace too, so it is an edge to that face as well: a submodule that imports its own package's
face that way closes a loop.

Layers: the parts of companion (its subpackages) are named in order, lowest first, in the package's
own docstring (`companion/__init__.py`), and each part's `__init__` docstring says which parts it
imports ("Imports: companion.core, companion.games."). A module may import its own part, the
parts its part names, and the top-level `companion` and `companion._moved`; a part may name only
parts below it.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package below `root`: dotted name -> file."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module at any depth, leaving out the bodies of `if TYPE_CHECKING:`
    (their `else:` still runs, so it counts)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        if isinstance(node, ast.If) and _type_checking_only(node):
            pending.extend(node.orelse)
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that module `name` (at `path`) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        if base in modules:  # the face whose namespace the names are read from
            targets.add(base)
        for alias in node.names:  # `from companion import x` imports the module companion.x
            targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {target for target in targets if target in modules and target != name}


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    modules = module_names(root, package)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) per strongly connected group of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm; the graph has a few dozen nodes
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph[node]:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_loop(graph, set(group)) for group in groups]


def _loop(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest path through `group` from its first module back to it, for the message."""
    start = min(group)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if start in graph[node]:
            path = [node]
            while path[-1] != start:
                path.append(came_from[path[-1]])
            return [*reversed(path), start]
        for nxt in sorted(graph[node] & group):
            if nxt not in came_from and nxt != start:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"no loop through {sorted(group)}")


def test_companion_has_no_import_cycle() -> None:
    graph = import_graph(ROOT, "companion")
    assert (
        "companion.webapp.services" in graph and "companion.webapp.api" in graph["companion.webapp.app"]
    )  # it reads them
    found = cycles(graph)
    assert not found, "import cycles in companion/: " + "; ".join(" -> ".join(c) for c in found)


def test_the_web_services_are_a_leaf() -> None:
    """The blueprints and the app factory meet in companion.webapp.services, which imports none of ours."""
    assert import_graph(ROOT, "companion")["companion.webapp.services"] == set()


PARTS_LINE = re.compile(r"The parts, lowest first[^:]*:(?P<parts>[^.]*)\.", re.S)
IMPORTS_LINE = re.compile(r"^Imports: (?P<what>.*?)\.\s*$", re.M | re.S)


def parts_in_order(root: Path, package: str) -> list[str]:
    """The parts (subpackages) as the package's docstring names them, lowest first."""
    doc = ast.get_docstring(ast.parse((root / package / "__init__.py").read_text())) or ""
    found = PARTS_LINE.search(doc)
    assert found, f"{package}/__init__.py names no parts ('The parts, lowest first ...: `a`, `b`.')"
    return re.findall(r"`(\w+)`", found["parts"])


def declared_imports(root: Path, package: str, part: str, order: list[str]) -> set[str]:
    """The parts that `part`'s docstring says it imports."""
    doc = ast.get_docstring(ast.parse((root / package / part / "__init__.py").read_text())) or ""
    found = IMPORTS_LINE.search(doc)
    assert found, f"{package}/{part}/__init__.py does not say what it imports ('Imports: ...')"
    what = " ".join(found["what"].split())
    if what == f"nothing of {package}":
        return set()
    if what == f"every part of {package}":
        return set(order) - {part}
    return set(re.findall(rf"\b{package}\.(\w+)", what))


def part_of(module: str) -> str | None:
    """`companion.games.peanuts.view` -> `games`; the top-level modules belong to no part."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 and not pieces[1].startswith("_") else None


def layer_breaches(graph: dict[str, set[str]], allowed: dict[str, set[str]]) -> list[str]:
    breaches = []
    for module, targets in sorted(graph.items()):
        part = part_of(module)
        for target in sorted(targets):
            other = part_of(target)
            if part and other and other != part and other not in allowed[part]:
                breaches.append(f"{module} -> {target}")
    return breaches


def test_every_subpackage_is_a_part() -> None:
    order = parts_in_order(ROOT, "companion")
    folders = sorted(path.parent.name for path in (ROOT / "companion").glob("*/__init__.py"))
    assert sorted(order) == folders
    assert [p.name for p in (ROOT / "companion").glob("*.py")] and {
        p.name for p in (ROOT / "companion").glob("*.py")
    } == {"__init__.py", "_moved.py"}, "a module beside the parts belongs in one of them"


def test_each_part_names_only_parts_below_it() -> None:
    order = parts_in_order(ROOT, "companion")
    for index, part in enumerate(order):
        declared = declared_imports(ROOT, "companion", part, order)
        assert declared <= set(order[:index]), f"{part} names parts above it: {declared - set(order[:index])}"


def test_each_module_imports_only_what_its_part_declares() -> None:
    order = parts_in_order(ROOT, "companion")
    allowed = {part: declared_imports(ROOT, "companion", part, order) for part in order}
    breaches = layer_breaches(import_graph(ROOT, "companion"), allowed)
    assert not breaches, "imports across the layers: " + "; ".join(breaches)


def test_a_layer_breach_is_found(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": '"""The parts, lowest first: `low`, `high`."""\n',
            "low/__init__.py": '"""Low.\n\nImports: nothing of pkg.\n"""\n',
            "low/a.py": "def f():\n    from pkg.high.b import x\n",
            "high/__init__.py": '"""High.\n\nImports: pkg.low.\n"""\n',
            "high/b.py": "from pkg.low.a import f\n",
        },
    )
    order = parts_in_order(root, "pkg")
    allowed = {part: declared_imports(root, "pkg", part, order) for part in order}
    assert order == ["low", "high"] and allowed == {"low": set(), "high": {"low"}}
    assert layer_breaches(import_graph(root, "pkg"), allowed) == ["pkg.low.a -> pkg.high.b"]


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    "a_text",
    [
        "from pkg.b import x\n",
        "def f():\n    from pkg import b\n",  # a function-level import is a cycle at run time
        "from . import b\n",
        "import pkg.sub.c\n",  # via a module in a subpackage
    ],
)
def test_a_cycle_is_found(tmp_path: Path, a_text: str) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": a_text,
            "b.py": "from pkg.a import y\n",
            "sub/__init__.py": "",
            "sub/c.py": "from ..b import z\n",
        },
    )
    found = cycles(import_graph(root, "pkg"))
    assert len(found) == 1 and found[0][0] == found[0][-1] == "pkg.a"


def test_a_face_cycle_is_found(tmp_path: Path) -> None:
    """A package face that imports its submodule, and the submodule that reads the face."""
    files = {"__init__.py": "", "sub/__init__.py": "from pkg.sub.c import x\n", "sub/d.py": ""}
    root = _package(tmp_path, {**files, "sub/c.py": "from pkg.sub import d\n"})
    assert cycles(import_graph(root, "pkg")) == [["pkg.sub", "pkg.sub.c", "pkg.sub"]]
    fixed = _package(tmp_path, {**files, "sub/c.py": "from pkg.sub.d import y\n"})
    assert cycles(import_graph(fixed, "pkg")) == []


def test_type_checking_imports_do_not_count(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import x\n",
            "b.py": "import typing\nif typing.TYPE_CHECKING:\n    pass\nelse:\n    from pkg.a import y\n",
        },
    )
    graph = import_graph(root, "pkg")
    assert graph["pkg.a"] == set() and graph["pkg.b"] == {"pkg.a"}
    assert cycles(graph) == []
