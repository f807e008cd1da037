"""`python -m tests.support.spark_demo_compare [CONFIG]`, in a clone after `make demo`: every intermediate
table and mart of the demo warehouse rebuilt on Spark (`local[2]`) for all its days and compared with
DuckDB's, row for row (the comparison `tests/e2e/test_spark_equal.py` makes on the 2-day test fleet, at
the demo's size). Prints each table's Spark seconds and its comparison; exits 1 if any table differs.
Spark's Parquet goes under /tmp/gpuledger-spark-demo."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import duckdb

from pipelines.engines.spark.parquet import export_tables
from pipelines.engines.spark.runner import SparkLedger, in_dependency_order, local_session
from pipelines.lib.config import load_config
from tests.e2e.test_spark_equal import BUILT_ONLY, INPUTS, INTERMEDIATE, MARTS
from tests.support.spark_compare import compare_table

WAREHOUSE = Path("data/warehouse.duckdb")
ROOT = Path("/tmp/gpuledger-spark-demo")


def main(argv: list[str]) -> int:
    config = Path(argv[0]) if argv else Path("data/demo/gpuledger.yaml")
    shutil.rmtree(ROOT, ignore_errors=True)
    with duckdb.connect(str(WAREHOUSE), read_only=True) as con:
        days = [d for (d,) in con.execute("SELECT DISTINCT day FROM marts.fct_cost_daily ORDER BY 1").fetchall()]
        export_tables(con, ROOT, INPUTS)
    params = load_config(config).sql_params()
    spark = local_session(app="gpuledger-demo-compare")
    spark.sparkContext.setLogLevel("ERROR")
    try:
        ledger = SparkLedger(spark, ROOT)
        ledger.register_all()
        began = time.monotonic()
        for table in in_dependency_order(INTERMEDIATE + MARTS + BUILT_ONLY):
            started = time.monotonic()
            for day in days:
                ledger.write_day(table, {"day": day, **params})
            print(f"{table}: {time.monotonic() - started:.1f} s on Spark", flush=True)
        print(f"Spark built {len(days)} days in {time.monotonic() - began:.1f} s")
    finally:
        spark.stop()
    differ, rows = 0, 0
    with duckdb.connect(str(WAREHOUSE), read_only=True) as con:
        for table in INTERMEDIATE + MARTS:
            result = compare_table(con, ROOT, table)
            rows += result.rows
            differ += bool(result.problems)
            print(f"{table}: {result.rows} rows, " + ("equal" if not result.problems else "; ".join(result.problems[:3])))
    print(f"{rows} rows compared, {differ} of {len(INTERMEDIATE + MARTS)} tables differ; not run on Spark: "
          f"{len(ledger.skipped)} ops statements")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
