"""The one writer of landed files: what a file gave the warehouse (its staging rows, its quarantine
rows, its ops.landed_files entry) is replaced together, in the caller's transaction, so a crash leaves
the old file's rows or the new ones, never a mix.

Every sync writes through it: a file at a time (`sync.sync_files`), a batch of files read set-wise
(DCGM telemetry, trainer events: `batches.write_batch`), and a group of bill deliveries whose statuses
change together (`bill_deliveries`). Table names come from the Source declarations, never from input;
values are bound.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone

import duckdb
import polars as pl

from pipelines.landing.parsed import conform
from pipelines.landing.source import Source
from pipelines.lib.warehouse import run_sql, sql, step

# ops.landed_files as a frame: an entry is written whole, so nothing an earlier entry of the file said
# (a bill's status, its digests) outlives its new content
LANDED_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String, "file": pl.String, "size_bytes": pl.Int64, "sha256": pl.String,
    "rows_staged": pl.Int64, "rows_quarantined": pl.Int64, "first_day": pl.Date, "last_day": pl.Date,
    "loaded_at": pl.Datetime("us"), "status": pl.String, "superseded_by": pl.String, "status_reason": pl.String,
    "modified_at": pl.Datetime("us"), "readable": pl.Boolean, "billing_scopes": pl.List(pl.String),
    "first_charge": pl.Datetime("us"), "last_charge": pl.Datetime("us"), "line_sample": pl.List(pl.UInt64),
    "day_digests": pl.String,
}


def entries(source: Source, rows: Iterable[dict] | pl.DataFrame) -> pl.DataFrame:
    """ops.landed_files entries of `source`'s files, every column set: what a row does not say is NULL,
    its status `current`, its load time now."""
    frame = rows if isinstance(rows, pl.DataFrame) else pl.DataFrame(list(rows), infer_schema_length=None)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    defaults = {"source": pl.lit(source.name), "status": pl.lit("current"), "loaded_at": pl.lit(now)}
    return conform(frame, LANDED_SCHEMA, defaults)


def forget(con: duckdb.DuckDBPyConnection, source: Source, files: list[str], staged: list[str] | None = None) -> None:
    """Takes out the staging and quarantine rows the parsers wrote for `files`. `staged` narrows the
    staging delete to the files known to have rows there (a file new to the warehouse has none: a large
    table is not scanned for it)."""
    staged = files if staged is None else staged
    if staged:
        con.execute(f"DELETE FROM {source.qualified_table} WHERE _file IN (SELECT unnest($files))", {"files": staged})
    if files:
        con.execute("DELETE FROM ops.quarantine WHERE source = $source AND origin = 'landing' "
                    "AND file IN (SELECT unnest($files))", {"source": source.name, "files": files})


def drop_entries(con: duckdb.DuckDBPyConnection, source: Source, files: list[str]) -> None:
    """Forgets files gone from the landing zone: their rows and their entries."""
    forget(con, source, files)
    con.execute("DELETE FROM ops.landed_files WHERE source = $source AND file IN (SELECT unnest($files))",
                {"source": source.name, "files": files})


def put_rows(con: duckdb.DuckDBPyConnection, source: Source, rows: pl.DataFrame, rel: str) -> None:
    """A parsed file's rows into its staging table (rolled up first, for a source that has a rollup)."""
    if rows.height == 0:
        return
    view = "dcgm_samples" if source.rollup else "incoming_rows"
    con.register(view, rows)
    try:
        if source.rollup:
            run_sql(con, source.rollup, {"file": rel})  # inserts the file's rolled-up rows
        else:
            con.execute(f"INSERT INTO {source.qualified_table} BY NAME SELECT * FROM incoming_rows")
    finally:
        con.unregister(view)


def put_rejects(con: duckdb.DuckDBPyConnection, rejects: pl.DataFrame) -> None:
    if rejects.height:
        con.register("incoming_rejects", rejects)
        try:
            con.execute("INSERT INTO ops.quarantine BY NAME SELECT * FROM incoming_rejects")
        finally:
            con.unregister("incoming_rejects")


def record(con: duckdb.DuckDBPyConnection, landed: pl.DataFrame) -> None:
    """Writes ops.landed_files entries made by `entries`, replacing the files' earlier ones."""
    con.register("landed_entries", landed)
    try:
        con.execute(sql(step("ops/landed_files", "replace")))
    finally:
        con.unregister("landed_entries")


def declare(con: duckdb.DuckDBPyConnection, source: Source) -> None:
    """Says in ops.landing_sources what the source is, so SQL asks `is_bill` rather than naming it."""
    con.execute("INSERT OR REPLACE INTO ops.landing_sources VALUES ($source, $table, $folder, $is_bill, $allocates)",
                {"source": source.name, "table": source.qualified_table, "folder": source.folder,
                 "is_bill": source.is_bill, "allocates": source.allocates})
