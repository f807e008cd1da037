"""The DuckDB warehouse: where it lives, its SQL files, and the one way tables get written.

SQL lives in `sql/<layer>/<table>.sql`, one file per table. Values are always bound as parameters
(`$day`, `$file`), never formatted into the text.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Iterator

import duckdb

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SQL_ROOT = PROJECT_ROOT / "sql"
DEFAULT_WAREHOUSE = PROJECT_ROOT / "data" / "warehouse.duckdb"

SCHEMAS = ("staging", "intermediate", "marts", "finance", "ops")
# Tables the pipeline creates before any asset runs, in dependency order.
BOOTSTRAP_TABLES = (
    "ops/landed_files",
    "ops/quarantine",
    "staging/stg_focus__bill_lines",
    "staging/stg_slurm__job_records",
    "staging/stg_dcgm__gpu_minutes",
    "staging/stg_runs__events",
    "staging/stg_inventory__nodes",
)


def warehouse_path() -> Path:
    return Path(os.environ.get("GPULEDGER_WAREHOUSE") or DEFAULT_WAREHOUSE)


@cache
def sql(name: str) -> str:
    """The text of `sql/<name>.sql`, e.g. sql("staging/stg_slurm__job_records")."""
    return (SQL_ROOT / f"{name}.sql").read_text()


_PARAM = re.compile(r"\$([a-z_][a-z0-9_]*)")
_COMMENT = re.compile(r"--[^\n]*")


def run_sql(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, object]) -> None:
    """Runs each statement of sql/<name>.sql (separated by `;` at a line end), binding the parameters
    each one names."""
    for statement in re.split(r";\s*(?:\n|$)", sql(name)):
        if _COMMENT.sub("", statement).strip():
            con.execute(statement, _bound(statement, params))


def _bound(statement: str, params: dict[str, object]) -> dict[str, object]:
    names = set(_PARAM.findall(_COMMENT.sub("", statement)))  # a `$name` in a comment is no parameter
    missing = names - params.keys()
    if missing:
        raise KeyError(f"SQL parameter(s) not provided: {sorted(missing)}")
    return {k: params[k] for k in names}


def write_day(
    con: duckdb.DuckDBPyConnection, table: str, params: dict[str, object], prepare: tuple[str, ...] = (),
    finish: tuple[str, ...] = (),
) -> int:
    """Replaces the rows of day `params['day']` in `table` (e.g. "marts/fct_cost_daily") by those of its
    query sql/<table>.sql, as DELETE + INSERT in one transaction; `prepare` scripts run first, inside
    it (they build the temp tables the query reads), `finish` scripts after it (they write what follows
    from the rows, e.g. quarantine notices). A new table takes its columns from the query.
    Returns the number of rows written."""
    qualified = table.replace("/", ".")  # a constant of the caller, never input
    query = sql(table)
    bound = _bound(query, params)
    with transaction(con):
        for script in prepare:
            run_sql(con, script, params)
        con.execute(f"CREATE TABLE IF NOT EXISTS {qualified} AS SELECT * FROM ({query}) WHERE FALSE", bound)
        _add_new_columns(con, qualified, query, bound)
        con.execute(f"DELETE FROM {qualified} WHERE day = $day", {"day": params["day"]})
        con.execute(f"INSERT INTO {qualified} BY NAME {query}", bound)
        for script in finish:
            run_sql(con, script, params)
        return con.execute(f"SELECT count(*) FROM {qualified} WHERE day = $day", {"day": params["day"]}).fetchall()[0][0]


def _add_new_columns(con: duckdb.DuckDBPyConnection, qualified: str, query: str, bound: dict) -> None:
    """A warehouse made by an older version lacks columns a query has since gained: add them (NULL for
    the days written before), so upgrading never needs the warehouse rebuilt."""
    have = {name for name, *_ in con.execute(f"DESCRIBE {qualified}").fetchall()}
    for name, dtype, *_ in con.execute(f"DESCRIBE SELECT * FROM ({query}) WHERE FALSE", bound).fetchall():
        if name not in have:
            con.execute(f'ALTER TABLE {qualified} ADD COLUMN "{name}" {dtype}')


def bootstrap(con: duckdb.DuckDBPyConnection) -> None:
    """Creates the schemas and the tables every asset expects; safe to run any number of times."""
    for schema in SCHEMAS:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")  # names are constants above
    for table in BOOTSTRAP_TABLES:
        con.execute(sql(table))
    from pipelines.lib.reference import load_reference  # reference data lives in models/

    load_reference(con)
    con.execute(sql("macros"))


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN … COMMIT, rolled back on any error so readers never see half a write."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def connect(path: str | Path | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection to the warehouse file (default: the live one). Read-only connections are the
    sandboxed kind every reader gets (pipelines/lib/sandbox.py)."""
    path = Path(path) if path else warehouse_path()
    if read_only:
        from pipelines.lib.sandbox import open_read_only

        return open_read_only(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return duckdb.connect(str(path))
