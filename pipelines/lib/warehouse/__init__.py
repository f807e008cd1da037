"""The DuckDB warehouse: where it lives, its SQL files, and the one way tables get written.

A table's SQL is in one place: `sql/<layer>/<table>.sql` when one query gives its rows, or the folder
`sql/<layer>/<table>/` of numbered step files `NN_<step>.sql`, each named for what it produces, in the
order they run; the step named for the table itself (`60_int_cost_allocations.sql`) is the query that
gives the rows. Every layer lays its SQL out so:
- intermediate and marts: `write_day` runs the steps before the query (they build the temp tables it
  reads), the query, then the steps after it (they write what follows from the rows, e.g. notes in
  ops.quarantine);
- staging: the parsers write the rows; the query is the day's rows (what the contract check reads),
  and the other steps are the SQL the staging of a file runs, each called by name from Python
  (`step(table, "checked")`), numbered in the order a staging pass runs them;
- ops: the query is the table's DDL, the other steps write its rows (`ops/landed_files/20_replace`).
Macros, every one, are in `sql/macros/` (bootstrap runs the folder; the Spark engine expands them).
Values are always bound as parameters (`$day`, `$file`), never formatted into the text.
"""

from __future__ import annotations

import hashlib
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Iterator

import duckdb

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SQL_ROOT = PROJECT_ROOT / "sql"
DEFAULT_WAREHOUSE = PROJECT_ROOT / "data" / "warehouse.duckdb"

SCHEMAS = ("staging", "intermediate", "marts", "finance", "ops")
# The ops tables the pipeline creates before any asset runs (sql/ops/<table>.sql), in dependency order;
# the staging tables are created from their contracts (models/staging.TABLES, `table_ddl`).
OPS_TABLES = (
    "ops/landed_files",
    "ops/landing_sources",
    "ops/quarantine",
    "ops/ledger_days",
    "ops/alerts",
    "ops/alert_deliveries",
    "ops/actions",
)


def warehouse_path() -> Path:
    return Path(os.environ.get("GPULEDGER_WAREHOUSE") or DEFAULT_WAREHOUSE)


@cache
def sql(name: str) -> str:
    """The text of `sql/<name>.sql`, e.g. sql("staging/stg_scheduler__job_allocations")."""
    return (SQL_ROOT / f"{name}.sql").read_text()


@cache
def staging_tables() -> dict[str, str]:
    """Each staging table ("staging/stg_focus__bill_lines") and its DDL, made from its contract."""
    from models.staging import TABLES  # the contracts live in models/, beside their checks

    return {contract.table: contract.ddl() for contract in TABLES}


def table_ddl(table: str) -> str:
    """The DDL of a bootstrapped table: a staging table's from its contract, an ops table's query (its
    SQL file, or the step of its folder named for it)."""
    return staging_tables().get(table) or sql(table_sql(table).query)


def bootstrap_tables() -> tuple[str, ...]:
    return (*OPS_TABLES, *staging_tables())


@dataclass(frozen=True)
class TableSql:
    """Where a daily table's SQL is (names as `sql` takes them)."""

    table: str                  # "intermediate/int_cost_allocations"
    prepare: tuple[str, ...]    # steps before the query
    query: str                  # the SELECT that gives the day's rows
    finish: tuple[str, ...]     # steps after the rows are written

    @property
    def files(self) -> tuple[str, ...]:
        return (*self.prepare, self.query, *self.finish)


@cache
def table_sql(table: str) -> TableSql:
    folder = SQL_ROOT / table
    if not folder.is_dir():
        return TableSql(table, (), table, ())
    steps = _steps(table)
    at = steps.index(_one_step(table, steps, table.rsplit("/", 1)[-1]))
    return TableSql(table, tuple(f"{table}/{s}" for s in steps[:at]), f"{table}/{steps[at]}",
                    tuple(f"{table}/{s}" for s in steps[at + 1:]))


@cache
def step(table: str, what: str) -> str:
    """The name (as `sql` and `run_sql` take it) of the one step `NN_<what>.sql` of the folder
    `sql/<table>/`, e.g. step("staging/stg_dcgm__gpu_minutes", "checked") is
    "staging/stg_dcgm__gpu_minutes/20_checked": a step Python runs by itself is named by what it
    produces, so renumbering a folder never touches its callers."""
    return f"{table}/{_one_step(table, _steps(table), what)}"


def _steps(table: str) -> list[str]:
    return sorted(p.stem for p in (SQL_ROOT / table).glob("*.sql"))


def _one_step(table: str, steps: list[str], what: str) -> str:
    named = [s for s in steps if s.split("_", 1)[-1] == what and s.split("_", 1)[0].isdigit()]
    if len(named) != 1:
        raise RuntimeError(f"sql/{table}/ needs exactly one step named NN_{what}.sql")
    return named[0]


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


def write_day(con: duckdb.DuckDBPyConnection, table: str, params: dict[str, object]) -> int:
    """Replaces the rows of day `params['day']` in `table` (e.g. "marts/fct_cost_daily") by those of its
    SQL (`table_sql`), as DELETE + INSERT in one transaction: the steps before the query run first,
    inside it, the query gives the rows, the steps after it run last. A new table takes its columns
    from the query. Returns the number of rows written."""
    qualified = table.replace("/", ".")  # a constant of the caller, never input
    steps = table_sql(table)
    query = sql(steps.query)
    bound = _bound(query, params)
    with transaction(con):
        for script in steps.prepare:
            run_sql(con, script, params)
        con.execute(f"CREATE TABLE IF NOT EXISTS {qualified} AS SELECT * FROM ({query}) WHERE FALSE", bound)
        _add_new_columns(con, qualified, query, bound)
        con.execute(f"DELETE FROM {qualified} WHERE day = $day", {"day": params["day"]})
        con.execute(f"INSERT INTO {qualified} BY NAME {query}", bound)
        for script in steps.finish:
            run_sql(con, script, params)
        return con.execute(f"SELECT count(*) FROM {qualified} WHERE day = $day", {"day": params["day"]}).fetchall()[0][0]


def _add_new_columns(con: duckdb.DuckDBPyConnection, qualified: str, query: str, bound: dict) -> None:
    """A warehouse made by an older version lacks columns a query has since gained: add them (NULL for
    the days written before), so upgrading never needs the warehouse rebuilt."""
    have = {name for name, *_ in con.execute(f"DESCRIBE {qualified}").fetchall()}
    for name, dtype, *_ in con.execute(f"DESCRIBE SELECT * FROM ({query}) WHERE FALSE", bound).fetchall():
        if name not in have:
            con.execute(f'ALTER TABLE {qualified} ADD COLUMN "{name}" {dtype}')


# Tables a warehouse made by an older version has under another name: renamed in place, rows kept.
RENAMED = {"staging.stg_slurm__job_records": "stg_scheduler__job_allocations"}


@cache
def macro_files() -> tuple[str, ...]:
    """Every macro file, `sql/macros/NN_<what>.sql` (names as `sql` takes them), in the order they run:
    a macro is created after the macros it calls (DuckDB binds a macro's calls when it is created).
    Bootstrap runs them all; the Spark engine expands macros from the same files."""
    return tuple(f"macros/{p.stem}" for p in sorted((SQL_ROOT / "macros").glob("*.sql")))


def bootstrap(con: duckdb.DuckDBPyConnection) -> None:
    """Creates the schemas and the tables every asset expects; safe to run any number of times.

    Every asset opens the warehouse with this, so it costs one query when nothing changed: the last
    thing it creates is a macro answering the digest of what it created (the SQL, the reference
    catalogs of models/); a warehouse that answers this version's digest and has every table is done.
    A different version's digest, or a table dropped by hand, runs it all again."""
    digest = _bootstrap_digest()
    if _bootstrapped(con, digest):
        return
    for schema in SCHEMAS:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")  # names are constants above
    existing = {f"{s}.{t}" for s, t in con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()}
    for old, new in RENAMED.items():
        if old in existing and f"{old.split('.')[0]}.{new}" not in existing:
            con.execute(f"ALTER TABLE {old} RENAME TO {new}")  # constants above
    for table in bootstrap_tables():
        con.execute(table_ddl(table))
    from pipelines.lib.warehouse.reference import load_reference  # reference data lives in models/

    load_reference(con)
    for macros in macro_files():
        run_sql(con, macros, {})
    # a hex digest is [0-9a-f] only: safe in the text
    con.execute(f"CREATE OR REPLACE MACRO gpuledger_bootstrap_digest() AS '{digest}'")


@cache
def _bootstrap_digest() -> str:
    from pipelines.lib.warehouse.reference import reference_fingerprint

    parts = [repr(SCHEMAS), repr(RENAMED), reference_fingerprint()]
    # a macro file's name is in the digest beside its text: renumbering the folder re-runs it in its order
    parts += [table_ddl(name) for name in bootstrap_tables()] + [f"{name}\n{sql(name)}" for name in macro_files()]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def _bootstrapped(con: duckdb.DuckDBPyConnection, digest: str) -> bool:
    try:
        done = con.execute("SELECT gpuledger_bootstrap_digest()").fetchall()[0][0]
    except duckdb.Error:  # no such macro: never bootstrapped, or by a version before the digest
        return False
    if done != digest:
        return False
    from pipelines.lib.warehouse.reference import TABLES as REFERENCE_TABLES

    wanted = [name.replace("/", ".") for name in bootstrap_tables()] + list(REFERENCE_TABLES)
    present = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND list_contains($wanted, schema_name || '.' || table_name)", {"wanted": wanted}).fetchall()[0][0]
    return present == len(wanted)


def has_table(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    """Whether the connection's own database has a table or view `schema.name` (a warehouse made by an
    older version may lack a newer one)."""
    return con.execute("SELECT count(*) FROM information_schema.tables WHERE table_catalog = current_database() "
                       "AND table_schema = $s AND table_name = $n", {"s": schema, "n": name}).fetchall()[0][0] > 0


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


def connect(path: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """A writer's connection to the warehouse file (default: the live one). Readers open it with
    pipelines/lib/warehouse/sandbox.py's `open_read_only`, the sandboxed kind."""
    path = Path(path) if path else warehouse_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    from pipelines.lib.warehouse.writer_lock import connect_writer

    return connect_writer(path)  # a reader holding the file open is waited for, bounded
