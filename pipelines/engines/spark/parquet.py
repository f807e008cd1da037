"""The Parquet layout both engines read: `<root>/<schema>/<table>/day=<YYYY-MM-DD>/*.parquet` for daily
tables, `<root>/<schema>/<table>/*.parquet` for the others. DuckDB copies staging, ops and the reference
catalogs there (mirror.py), Spark writes the intermediate tables and the marts, and DuckDB reads them
back (read_parquet_sql; create_views makes them the warehouse's tables, so every reader runs unchanged)."""

from __future__ import annotations

from pathlib import Path

import duckdb


def read_parquet_sql(root: Path, table: str) -> str:
    """A DuckDB SELECT over a table's Parquet, `day` from the partition folders where it is partitioned."""
    folder = root / table
    if any(p.is_dir() and p.name.startswith("day=") for p in folder.iterdir()):
        glob = str(folder / "*" / "*.parquet")
        return f"SELECT * FROM read_parquet('{quoted(glob)}', hive_partitioning = true)"
    return f"SELECT * FROM read_parquet('{quoted(str(folder / '*.parquet'))}')"


def create_views(con: duckdb.DuckDBPyConnection, root: Path, tables: list[str]) -> None:
    """Views `schema.name` in a DuckDB database over each table's Parquet (the marts Spark wrote), so
    what reads the published file (finance views, reports) reads them unchanged."""
    for table in tables:
        schema, name = table.split("/")  # names from the caller's constant list, never input
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        con.execute(f"CREATE OR REPLACE VIEW {schema}.{name} AS {read_parquet_sql(root, table)}")


def quoted(path: str | Path) -> str:
    """A path of ours as the text of a SQL string literal (COPY and read_parquet take no bound path):
    a quote in it doubled, so the literal stays one literal."""
    return str(path).replace("'", "''")
