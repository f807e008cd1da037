"""Runs one table's SQL (its steps and its query, `warehouse.table_sql`) on an in-memory DuckDB over
given rows, for unit tests of single steps: what goes in is written in the test, what comes out is
compared with what the test expects."""

from __future__ import annotations

import duckdb
import polars as pl

from pipelines.lib.warehouse import _bound, bootstrap, run_sql, sql, table_sql


def warehouse() -> duckdb.DuckDBPyConnection:
    """An empty in-memory warehouse with its schemas, staging tables, reference data and macros."""
    con = duckdb.connect()
    bootstrap(con)
    return con


def given(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict], schema: dict | None = None) -> None:
    """`table` ("schema.name") holding exactly `rows` (only the columns the step reads need be given)."""
    frame = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    con.register("given_rows", frame)
    con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM given_rows")  # a test's constant
    con.unregister("given_rows")


def rows_of(con: duckdb.DuckDBPyConnection, table: str, params: dict, order_by: str = "ALL") -> list[dict]:
    """The rows `table`'s SQL gives for `params` (its steps run first), as dicts."""
    steps = table_sql(table)
    for step in steps.prepare:
        run_sql(con, step, params)
    query = sql(steps.query)
    return con.sql(f"SELECT * FROM ({query}) ORDER BY {order_by}", params=_bound(query, params)).pl().to_dicts()
