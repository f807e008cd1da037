"""Imports go one way: `pipelines/lib/` (the warehouse, config and Dagster factories) imports nothing
built on it; ingest, reports, exports, collect (on ingest too) and alerts (on ingest too) import lib,
but not the Dagster definitions or the CLI; only the CLI and the definitions sit on top. Read from the
source with `ast`, so a lazy import counts too."""

import ast
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

PIPELINES = PROJECT_ROOT / "pipelines"
# package -> the pipelines packages it may import
ALLOWED = {
    "lib": {"lib"},
    "ingest": {"lib", "ingest"},
    "reports": {"lib", "reports"},
    "exports": {"lib", "exports"},
    "collect": {"lib", "ingest", "collect"},  # collectors write landing files the ingest reads back
    "alerts": {"lib", "ingest", "alerts"},
    "engines": {"lib", "engines"},
    "defs": {"lib", "ingest", "reports", "exports", "collect", "alerts", "engines", "defs"},
    "cli": {"lib", "ingest", "reports", "exports", "collect", "alerts", "engines", "cli", "definitions", "bench"},
}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "pipelines" or name.startswith("pipelines.")}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_what_lies_below_it(package):
    wrong = []
    for path in sorted((PIPELINES / package).rglob("*.py")):
        for name in _imports(path):
            parts = name.split(".")
            if len(parts) < 2 or parts[1] not in ALLOWED[package]:
                wrong.append(f"{path.relative_to(PROJECT_ROOT)} imports {name}")
    assert not wrong, wrong
