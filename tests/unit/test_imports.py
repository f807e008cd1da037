"""Imports go one way. `pipelines/lib/` (the warehouse, config and Dagster factories) imports nothing
built on it; `landing/` (which files were taken in, and the one writer) only lib; the formats of
`ingest/` build on landing; reports, exports, collect and alerts on those, but not on the Dagster
definitions or the CLI; only the CLI and the definitions sit on top. And no module imports, however
indirectly, one that imports it back. Read from the source with `ast`, so a lazy import counts too."""

import ast
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

PIPELINES = PROJECT_ROOT / "pipelines"
# package -> the pipelines packages it may import
ALLOWED = {
    "lib": {"lib"},
    "landing": {"lib", "landing"},
    "ingest": {"lib", "landing", "ingest"},
    "reports": {"lib", "reports"},
    "exports": {"lib", "exports"},
    "collect": {"lib", "landing", "ingest", "collect"},  # collectors write landing files the ingest reads back
    "alerts": {"lib", "landing", "ingest", "alerts"},
    "engines": {"lib", "engines"},
    "defs": {"lib", "landing", "ingest", "reports", "exports", "collect", "alerts", "engines", "defs"},
    "serve": {"lib", "reports", "serve"},  # the server renders the reports' own pages
    "cli": {"lib", "landing", "ingest", "reports", "exports", "collect", "alerts", "engines", "serve", "cli",
            "definitions", "bench"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PIPELINES.rglob("*.py"))}


def _imports(path: Path) -> set[str]:
    """The pipelines modules a file imports: `from pipelines.a import b` is module `pipelines.a.b` when
    there is one, else `pipelines.a`. What only a type checker reads (`if TYPE_CHECKING:`) is not run."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            node.body = []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("pipelines.")}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_what_lies_below_it(package):
    wrong = []
    for path in sorted((PIPELINES / package).rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[1] not in ALLOWED[package]:
                wrong.append(f"{path.relative_to(PROJECT_ROOT)} imports {name}")
    assert not wrong, wrong


def test_no_module_imports_itself_through_others():
    graph = {name: sorted(m for m in _imports(path) if m in MODULES and m != name) for name, path in MODULES.items()}
    cycles, index, low, stack, on_stack = [], {}, {}, [], set()

    def visit(node: str) -> None:  # Tarjan: a strongly connected part of more than one module is a cycle
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                part.append(member)
                if member == node:
                    break
            if len(part) > 1:
                cycles.append(sorted(part))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    assert not cycles, [" <-> ".join(c) for c in cycles]
