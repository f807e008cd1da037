"""`python -m tests.support.spark_demo_compare [LANDING CONFIG]`, in a clone after `make demo`: the demo's
days run again by the Dagster job with `--engine spark` (`local[2]`) into a warehouse of their own under
/tmp/gpuledger-spark-demo, then every intermediate table, mart and finance view compared with the demo
warehouse's (DuckDB's), row for row — the comparison `tests/e2e/test_spark_equal.py` makes on the 2-day
test fleet, at the demo's size. Prints the run's time and each comparison; exits 1 if anything differs."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb

from pipelines.lib.warehouse.publish import FINANCE_VIEWS
from tests.e2e.test_spark_equal import INTERMEDIATE, MARTS, engine
from tests.support.pipeline import run_pipeline
from tests.support.spark_compare import compare_rows

DEMO = Path("data/warehouse.duckdb")
WORK = Path("/tmp/gpuledger-spark-demo")


def main(argv: list[str]) -> int:
    landing, config = (Path(argv[0]), Path(argv[1])) if argv else (Path("data/demo/landing"), Path("data/demo/gpuledger.yaml"))
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    with duckdb.connect(str(DEMO), read_only=True) as con:
        days = [d for (d,) in con.execute("SELECT DISTINCT day FROM marts.fct_cost_daily ORDER BY 1").fetchall()]
    began = time.monotonic()
    with engine("spark"):
        failed = run_pipeline(landing.resolve(), WORK / "warehouse.duckdb", config.resolve(), days,
                              instance=dg.DagsterInstance.ephemeral())
    print(f"gpuledger run --engine spark: {len(days)} days in {time.monotonic() - began:.0f} s"
          + (f"; failed: {failed}" if failed else ""))
    differ, rows = 0, 0
    names = INTERMEDIATE + MARTS + [f"finance/{v}" for v in FINANCE_VIEWS]
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{DEMO.with_name('warehouse.published.duckdb')}' AS duck_pub (READ_ONLY)")
        con.execute(f"ATTACH '{DEMO}' AS duck (READ_ONLY)")
        con.execute(f"ATTACH '{WORK / 'warehouse.duckdb'}' AS spark (READ_ONLY)")
        con.execute(f"ATTACH '{WORK / 'warehouse.published.duckdb'}' AS spark_pub (READ_ONLY)")
        for name in names:
            qualified = name.replace("/", ".")
            duck, spark = ("duck_pub", "spark_pub") if name.startswith("finance/") else ("duck", "spark")
            result = compare_rows(con, f"SELECT * FROM {duck}.{qualified}", f"SELECT * FROM {spark}.{qualified}", name)
            rows += result.rows
            differ += bool(result.problems)
            print(f"{name}: {result.rows} rows, " + ("equal" if not result.problems else "; ".join(result.problems[:3])))
    print(f"{rows} rows compared, {differ} of {len(names)} tables and views differ")
    return 1 if differ or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
