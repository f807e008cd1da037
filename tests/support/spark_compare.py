"""One table or view of DuckDB against the same rows from Spark (its Parquet read back by DuckDB): same
columns, the same column types where money is (DECIMAL), the same rows — sorted, value for value
(Decimal equality is exact; DOUBLEs are compared exactly too)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.engines.spark.parquet import read_parquet_sql

# Spark has no 128-bit integer: a HUGEINT column of DuckDB is DECIMAL(38, 0) there (docs/spark.md#money)
SAME_TYPE = {("HUGEINT", "DECIMAL(38,0)")}


@dataclass
class Comparison:
    table: str
    rows: int
    problems: list[str]


def _sort_key(row: tuple) -> tuple:
    return tuple((v is None, type(v).__name__, str(v)) for v in row)


def compare_table(warehouse: duckdb.DuckDBPyConnection, spark_root: Path, table: str) -> Comparison:
    """`table` ("schema/name") of the DuckDB warehouse against Spark's Parquet of it."""
    return compare_rows(warehouse, f"SELECT * FROM {table.replace('/', '.')}", read_parquet_sql(spark_root, table),
                        table)


def compare_rows(con: duckdb.DuckDBPyConnection, want_sql: str, have_sql: str, label: str) -> Comparison:
    """The rows of `want_sql` (DuckDB's) against those of `have_sql` (Spark's), both run by `con`."""
    want_types = dict((r[0], r[1]) for r in con.execute(f"DESCRIBE {want_sql}").fetchall())
    have_types = dict((r[0], r[1]) for r in con.execute(f"DESCRIBE {have_sql}").fetchall())
    columns = list(want_types)
    missing = [c for c in columns if c not in have_types]
    extra = [c for c in have_types if c not in want_types]
    if missing or extra:
        return Comparison(label, 0, [f"columns missing on Spark {missing}, extra {extra}"])
    problems = []
    for c in columns:
        w, h = want_types[c], have_types[c]
        if (w.startswith("DECIMAL") or h.startswith("DECIMAL")) and w != h and (w, h) not in SAME_TYPE:
            problems.append(f"column {c}: DuckDB {w}, Spark {h}")
    select = ", ".join(f'"{c}"' for c in columns)
    want = sorted(con.execute(f"SELECT {select} FROM ({want_sql})").fetchall(), key=_sort_key)
    have = sorted(con.execute(f"SELECT {select} FROM ({have_sql})").fetchall(), key=_sort_key)
    if len(want) != len(have):
        problems.append(f"{len(want)} rows on DuckDB, {len(have)} on Spark")
    differ = [(w, h) for w, h in zip(want, have) if w != h]
    for w, h in differ[:3]:
        cells = [f"{c}: {a!r} != {b!r}" for c, a, b in zip(columns, w, h) if a != b]
        problems.append("row differs: " + "; ".join(cells))
    if len(differ) > 3:
        problems.append(f"… {len(differ)} rows differ in all")
    return Comparison(label, len(want), problems)
