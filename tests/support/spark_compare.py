"""One table of the DuckDB warehouse against the same table written by Spark as Parquet, read back by
DuckDB: same columns, same column types where money is (DECIMAL), same rows — sorted, value for value
(Decimal equality is exact; DOUBLEs compared exactly too)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.engines.spark.parquet import read_parquet_sql


@dataclass
class Comparison:
    table: str
    rows: int
    problems: list[str]


def _sort_key(row: tuple) -> tuple:
    return tuple((v is None, type(v).__name__, str(v)) for v in row)


def compare_table(warehouse: duckdb.DuckDBPyConnection, spark_root: Path, table: str) -> Comparison:
    qualified = table.replace("/", ".")  # a constant of the test
    want_types = dict((r[0], r[1]) for r in warehouse.execute(f"DESCRIBE {qualified}").fetchall())
    columns = list(want_types)
    spark_sql = read_parquet_sql(spark_root, table)
    have_types = dict((r[0], r[1]) for r in warehouse.execute(f"DESCRIBE {spark_sql}").fetchall())
    problems = []
    missing = [c for c in columns if c not in have_types]
    extra = [c for c in have_types if c not in want_types]
    if missing or extra:
        return Comparison(table, 0, [f"columns missing on Spark {missing}, extra {extra}"])
    for c in columns:
        w, h = want_types[c], have_types[c]
        # Spark has no 128-bit integer: HUGEINT is DECIMAL(38, 0) there (docs/spark.md#money)
        if (w.startswith("DECIMAL") or h.startswith("DECIMAL")) and w != h and (w, h) != ("HUGEINT", "DECIMAL(38,0)"):
            problems.append(f"column {c}: DuckDB {w}, Spark {h}")
    select = ", ".join(f'"{c}"' for c in columns)
    want = sorted(warehouse.execute(f"SELECT {select} FROM {qualified}").fetchall(), key=_sort_key)
    have = sorted(warehouse.execute(f"SELECT {select} FROM ({spark_sql})").fetchall(), key=_sort_key)
    if len(want) != len(have):
        problems.append(f"{len(want)} rows on DuckDB, {len(have)} on Spark")
    differ = [(w, h) for w, h in zip(want, have) if w != h]
    for w, h in differ[:3]:
        cells = [f"{c}: {a!r} != {b!r}" for c, a, b in zip(columns, w, h) if a != b]
        problems.append("row differs: " + "; ".join(cells))
    if len(differ) > 3:
        problems.append(f"… {len(differ)} rows differ in all")
    return Comparison(table, len(want), problems)
