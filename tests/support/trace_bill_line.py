"""How many files one FOCUS bill line passes through from its landing file to finance.chargeback_monthly,
and how often its way switches between Python and SQL, measured by an execution trace.

    .venv/bin/python -m tests.support.trace_bill_line [--json]

A small fleet is simulated (one day, two nodes) and that day run through the Dagster job in this
process, with a profiler recording the project's .py files whose functions are called and a wrapper of
`warehouse.sql` recording the .sql files read, while one of the assets (and asset checks) a bill line
flows through runs: the bills' staging, int_bill_line_hours, int_bill_line_placements,
int_cost_allocations, fct_cost_daily and the finance.chargeback_monthly view (made by the publish
step, `create_finance_views`). Not counted: bootstrap (it creates every table and macro, whatever a
line needs), the other assets, and the other finance views.

A macro file counts when the SQL on the way calls one of its macros, or a macro of it does: bootstrap
runs every macro file, so what a line passes through is what it calls.

Switches: the files in the order they are first touched on the way, each Python or SQL; a switch is
two files one after the other in different languages. A file touched again later is not touched
first again, so a switch is where the way first goes into new code of the other language.

The script runs against whichever checkout it is started in (it reads both the layout with
sql/macros/ and the one before it), so a before and after are two runs of the same file.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import threading
from datetime import date
from pathlib import Path

PROJECT = Path.cwd().resolve()
sys.path.insert(0, str(PROJECT))

DAY = date(2026, 3, 2)
WAY = ("staging/stg_focus__bill_lines", "intermediate/int_bill_line_hours",
       "intermediate/int_bill_line_placements", "intermediate/int_cost_allocations", "marts/fct_cost_daily",
       "finance/chargeback_monthly")
ASSET_FUNCTIONS = {"_asset", "_check", "_view"}  # the bodies of the asset factories of pipelines/
PYTHON_ROOTS = (PROJECT / "pipelines", PROJECT / "models")
MACRO = re.compile(r"CREATE\s+OR\s+REPLACE\s+MACRO\s+(?:\w+\.)?(\w+)", re.IGNORECASE)


class Trace:
    def __init__(self) -> None:
        self.asset: str | None = None       # the asset of the way running now
        self.asset_frame = None
        self.paused = 0                     # inside bootstrap
        self.order: list[str] = []          # files in the order first touched
        self.seen: set[str] = set()
        self.by_asset: dict[str, list[str]] = {}

    def touch(self, rel: str) -> None:
        if self.asset is None or self.paused:
            return
        if (self.asset == WAY[-1] and rel.endswith(".sql") and rel != f"sql/{WAY[-1]}.sql"
                and "macros" not in rel and not rel.startswith("sql/lib/")):
            return  # the other finance views, made beside it
        if rel not in self.seen:
            self.seen.add(rel)
            self.order.append(rel)
        files = self.by_asset.setdefault(self.asset, [])
        if rel not in files:
            files.append(rel)

    def profile(self, frame, event, arg) -> None:
        code = frame.f_code
        if event == "call":
            path = _project_file(code.co_filename)
            if path is None:
                return
            if self.asset is None and code.co_name == "create_finance_views":
                # the finance views are made in the published file by the publish step (and by their
                # own assets where a job runs them): of its SQL the line passes through its view's
                self.asset, self.asset_frame = WAY[-1], frame
            elif self.asset is None and code.co_name in ASSET_FUNCTIONS:
                table = _asset_of(frame)
                if table in WAY:
                    self.asset, self.asset_frame = table, frame
                    if table.startswith("finance/"):  # its SQL was read when the code location loaded
                        self.touch(f"sql/{table}.sql")
            if code.co_name == "bootstrap" and _is_warehouse(path):
                self.paused += 1
            self.touch(path.relative_to(PROJECT).as_posix())
        elif event == "return":
            if code.co_name == "bootstrap" and _is_warehouse(Path(code.co_filename)) and self.paused:
                self.paused -= 1
            if frame is self.asset_frame:
                self.asset, self.asset_frame = None, None


def _is_warehouse(path: Path) -> bool:
    """pipelines/lib/warehouse.py, or the package pipelines/lib/warehouse/ it became."""
    return path.name == "warehouse.py" or (path.name == "__init__.py" and path.parent.name == "warehouse")


_PROJECT_FILES: dict[str, Path | None] = {}


def _project_file(name: str) -> Path | None:
    """The path of a code object's file if it is the project's Python (cached: asked on every call)."""
    if name not in _PROJECT_FILES:
        path = Path(name)
        _PROJECT_FILES[name] = path if any(path.is_relative_to(r) for r in PYTHON_ROOTS) else None
    return _PROJECT_FILES[name]


def _asset_of(frame) -> str | None:
    """The table of an asset factory's body, from the closure it was made with."""
    local = frame.f_locals
    if "table" in local and isinstance(local["table"], str):
        return local["table"]
    if "view" in local and isinstance(local["view"], str):
        return f"finance/{local['view']}"
    for name in ("sources", "source"):
        got = local.get(name)
        source = got[0] if isinstance(got, tuple) and got else got
        if getattr(source, "table", None):
            return source.table
    return None


def macro_files() -> dict[str, str]:
    """Each macro's name and the file (relative to the checkout) that defines it."""
    files = sorted((PROJECT / "sql" / "macros").glob("*.sql")) or [PROJECT / "sql" / "macros.sql",
                                                                   *sorted((PROJECT / "sql" / "lib").glob("*.sql"))]
    return {name.lower(): f.relative_to(PROJECT).as_posix()
            for f in files if f.is_file() for name in MACRO.findall(f.read_text())}


def macros_called(sql_files: list[str], defined: dict[str, str]) -> list[str]:
    """The macro files the SQL files call into, macros calling macros followed."""
    bodies = {f: (PROJECT / f).read_text() for f in set(defined.values())}
    found: list[str] = []
    todo = list(sql_files)
    while todo:
        text = (PROJECT / todo.pop()).read_text()
        for name, where in defined.items():
            if where not in found and re.search(rf"\b{name}\s*\(", text, re.IGNORECASE):
                found.append(where)
                todo.append(where)
    return [f for f in found if f in bodies]


def measure() -> dict:
    from pipelines.lib import warehouse

    trace = Trace()
    read = warehouse.sql

    def recording_sql(name: str) -> str:
        trace.touch(f"sql/{name}.sql")
        return read(name)

    warehouse.sql = recording_sql  # before the pipeline's modules bind it by `from … import sql`

    from simulator import simulate
    from tests.support.pipeline import run_pipeline

    root = Path(tempfile.mkdtemp(prefix="trace_bill_line_"))
    simulate(root, DAY, 1, nodes=2, seed=7)
    config = root / "gpuledger.yaml"
    threading.setprofile(trace.profile)
    sys.setprofile(trace.profile)
    try:
        failed = run_pipeline(root / "landing", root / "warehouse.duckdb", config if config.exists() else None, [DAY])
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    assert not failed, failed

    sql_on_way = [f for f in trace.order if f.endswith(".sql")]
    defined = macro_files()
    macros = [m for m in macros_called(sql_on_way, defined) if m not in trace.seen]
    order = list(trace.order)
    for m in macros:  # placed after the first SQL file that calls into it: SQL beside SQL
        user = next(f for f in order if f.endswith(".sql") and f != m
                    and any(re.search(rf"\b{n}\s*\(", (PROJECT / f).read_text(), re.IGNORECASE)
                            for n, w in defined.items() if w == m))
        order.insert(order.index(user) + 1, m)
    python = [f for f in order if f.endswith(".py")]
    sql_files = [f for f in order if f.endswith(".sql")]
    kinds = ["sql" if f.endswith(".sql") else "py" for f in order]
    switches = sum(1 for a, b in zip(kinds, kinds[1:]) if a != b)
    return {"files": len(order), "python": len(python), "sql": len(sql_files), "switches": switches,
            "macro_files": macros, "order": order, "by_asset": trace.by_asset}


def main() -> None:
    result = measure()
    if "--json" in sys.argv:
        print(json.dumps(result, indent=1))
        return
    print(f"{result['files']} files ({result['python']} Python, {result['sql']} SQL, of them "
          f"{len(result['macro_files'])} macro files), {result['switches']} Python<->SQL switches")
    for f in result["order"]:
        print("  ", f)


if __name__ == "__main__":
    main()
