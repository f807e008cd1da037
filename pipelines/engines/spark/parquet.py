"""The Parquet layout both engines read: `<root>/<schema>/<table>/day=<YYYY-MM-DD>/*.parquet` for daily
tables, `<root>/<schema>/<table>/*.parquet` for the others. DuckDB writes staging there (until the
parsers write it themselves: docs/spark.md#not-built-yet), Spark writes the intermediate tables and the
marts, and DuckDB reads them back (read_parquet_sql, create_views: finance SQL runs unchanged on them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb


def export_tables(con: duckdb.DuckDBPyConnection, root: Path, tables: list[str]) -> dict[str, int]:
    """Copies each of `tables` ("schema/name") from the DuckDB warehouse to Parquet under `root`, by day
    where it has a `day` column that is never NULL. Returns rows per table."""
    rows = {}
    for table in tables:
        qualified = table.replace("/", ".")  # names from the caller's constant list, never input
        out = root / table
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        columns = [r[0] for r in con.execute(f"DESCRIBE {qualified}").fetchall()]
        n, null_days = con.execute(
            f"SELECT count(*), {'count(*) FILTER (day IS NULL)' if 'day' in columns else '0'} FROM {qualified}"
        ).fetchall()[0]
        if "day" in columns and null_days == 0 and n > 0:
            con.execute(f"COPY {qualified} TO '{out}' (FORMAT parquet, PARTITION_BY (day), OVERWRITE_OR_IGNORE)")
        else:
            con.execute(f"COPY {qualified} TO '{out / 'data.parquet'}' (FORMAT parquet)")
        rows[table] = n
    return rows


def read_parquet_sql(root: Path, table: str) -> str:
    """A DuckDB SELECT over a table's Parquet, `day` from the partition folders where it is partitioned."""
    folder = root / table
    if any(p.is_dir() and p.name.startswith("day=") for p in folder.iterdir()):
        glob = str(folder / "*" / "*.parquet")
        return f"SELECT * FROM read_parquet('{_quoted(glob)}', hive_partitioning = true)"
    return f"SELECT * FROM read_parquet('{_quoted(str(folder / '*.parquet'))}')"


def create_views(con: duckdb.DuckDBPyConnection, root: Path, tables: list[str]) -> None:
    """Views `schema.name` in a DuckDB database over each table's Parquet (the marts Spark wrote), so
    what reads the published file (finance views, reports) reads them unchanged."""
    for table in tables:
        schema, name = table.split("/")  # names from the caller's constant list, never input
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        con.execute(f"CREATE OR REPLACE VIEW {schema}.{name} AS {read_parquet_sql(root, table)}")


def _quoted(path: str) -> str:
    # our own directory paths; a quote in one is doubled so the literal stays one literal
    return path.replace("'", "''")
