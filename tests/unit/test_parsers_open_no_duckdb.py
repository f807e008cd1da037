"""No parser opens a DuckDB: a parser runs its SQL on its caller's connection (`Source.parse(con, …)`,
pipelines/landing/source.py), a cursor of the warehouse's in sync. Under pipelines/ingest and
pipelines/landing only the passes that run without a warehouse open one, an in-memory DuckDB for the
whole pass, which they hand down. Read from the source with `ast`."""

import ast

from tests.conftest import PROJECT_ROOT

# (file, function): the passes without a warehouse, each opening one in-memory DuckDB per pass
PASSES = {
    ("pipelines/ingest/coverage.py", "earliest_day"),          # the ledger's first day, before any warehouse
    ("pipelines/landing/restatements.py", "bill_days_to_rerun"),  # the restatement sensor holds none
}


def _opened() -> set[tuple[str, str]]:
    found = set()
    for folder in ("ingest", "landing"):
        for path in sorted((PROJECT_ROOT / "pipelines" / folder).rglob("*.py")):
            rel = path.relative_to(PROJECT_ROOT).as_posix()
            tree = ast.parse(path.read_text())
            for fn in ast.walk(tree):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(fn):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                            and node.func.attr == "connect" and isinstance(node.func.value, ast.Name)
                            and node.func.value.id == "duckdb"):
                        found.add((rel, fn.name))
    return found


def test_only_the_passes_without_a_warehouse_open_a_duckdb():
    assert _opened() == PASSES
