"""The ledger's SQL on Apache Spark equals DuckDB's, cent for cent (docs/spark.md): the small simulated
ledger (2 days, 4 nodes) is built by DuckDB as usual; its staging tables and the inputs the intermediate
SQL reads go to Parquet by day; a local Spark session runs the same sql/ files, transpiled, for those days
and writes Parquet by day; every intermediate table and mart is then compared row for row with DuckDB's,
reading Spark's Parquet back with DuckDB, and the finance views, run by DuckDB over Spark's marts, with the
published file's. Select with `-m spark`; skipped where Java or pyspark is absent."""

from __future__ import annotations

import shutil
import time
from collections import defaultdict
from decimal import Decimal

import duckdb
import pytest

from tests.support.spark_compare import compare_rows, compare_table

pytestmark = pytest.mark.spark

# what the intermediate SQL reads besides other intermediate tables: staging, the quarantined bill rows
# and landed files (ops), the reference catalogs (intermediate.ref_*, marts.dim_ledger_categories)
INPUTS = ["staging/stg_focus__bill_lines", "staging/stg_scheduler__job_allocations",
          "staging/stg_dcgm__gpu_minutes", "staging/stg_runs__events", "staging/stg_inventory__nodes",
          "staging/stg_plans__run_plans", "ops/quarantine", "ops/landed_files",
          "intermediate/ref_gpu_model_patterns", "intermediate/ref_gpu_peak_flops", "intermediate/ref_gpu_tdp",
          "marts/dim_ledger_categories"]
INTERMEDIATE = ["intermediate/int_bill_line_hours", "intermediate/int_nodes", "intermediate/int_node_hours",
                "intermediate/int_job_allocations", "intermediate/int_gpu_seconds",
                "intermediate/int_node_hour_energy", "intermediate/int_bill_line_placements",
                "intermediate/int_config_cost_lines", "intermediate/int_cost_allocations"]
MARTS = ["marts/fct_bill_daily", "marts/fct_config_cost_daily", "marts/fct_cost_daily", "marts/fct_node_hourly",
         "marts/fct_idle_waste_daily", "marts/dim_nodes", "marts/dim_projects", "marts/fct_job_cost",
         "marts/fct_rerun_loss", "marts/fct_checkpoint_saves", "marts/fct_run_efficiency_daily",
         "marts/dim_run_plans", "marts/fct_run_budget_daily"]
# built on Spark as well, but with no rows in this ledger: nothing to compare
BUILT_ONLY = ["intermediate/int_job_conflicts"]


def _spark_or_skip():
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java (17) on PATH: `java` was not found")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        pytest.skip("pyspark is not installed (pip install -e '.[spark]')")


@pytest.fixture(scope="module")
def spark_session():
    _spark_or_skip()
    from pipelines.engines.spark.runner import local_session

    spark = local_session(app="gpuledger-test")
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


@pytest.fixture(scope="module")
def spark_ledger(simulated_ledger, spark_session, tmp_path_factory):
    """The simulated ledger's tables built again by Spark, as Parquet under one folder."""
    from pipelines.engines.spark.parquet import export_tables
    from pipelines.engines.spark.runner import SparkLedger, in_dependency_order
    from pipelines.lib.config import load_config

    root = tmp_path_factory.mktemp("spark_ledger")
    with duckdb.connect(str(simulated_ledger.warehouse), read_only=True) as con:
        export_tables(con, root, INPUTS)
    params = load_config(simulated_ledger.config).sql_params()
    ledger = SparkLedger(spark_session, root)
    ledger.register_all()
    timings = {}
    for table in in_dependency_order(INTERMEDIATE + MARTS + BUILT_ONLY):
        began = time.monotonic()
        for day in simulated_ledger.days:
            ledger.write_day(table, {"day": day, **params})
        timings[table] = round(time.monotonic() - began, 1)
    print("spark seconds per table (both days):", timings)
    return ledger, params


@pytest.mark.parametrize("table", INTERMEDIATE + MARTS)
def test_spark_table_equals_duckdb(simulated_ledger, spark_ledger, table):
    ledger, _ = spark_ledger
    with duckdb.connect(str(simulated_ledger.warehouse), read_only=True) as con:
        result = compare_table(con, ledger.root, table)
    assert result.rows > 0, f"{table} has no rows on DuckDB: nothing was compared"
    assert not result.problems, f"{table}: " + "; ".join(result.problems)


def test_spark_marts_conserve_every_cost_line(simulated_ledger, spark_ledger):
    """Per day and currency, what Spark's fct_cost_daily allocates is what the day's bill lines and config
    cost lines owe (Spark's fct_bill_daily and fct_config_cost_daily), added up here in Python's Decimal;
    and the conservation check of sql/marts/checks/ itself, run on Spark, finds nothing off."""
    from pipelines.engines.spark.parquet import read_parquet_sql
    from pipelines.lib.warehouse import sql

    ledger, params = spark_ledger
    allocated: dict[tuple, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    owed: dict[tuple, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    with duckdb.connect() as con:
        for table, into in (("marts/fct_cost_daily", allocated), ("marts/fct_bill_daily", owed),
                            ("marts/fct_config_cost_daily", owed)):
            for day, currency, effective, billed in con.execute(
                    f"SELECT day, billing_currency, effective_cost, billed_cost FROM ({read_parquet_sql(ledger.root, table)})"
            ).fetchall():
                into[(day, currency)][0] += effective
                into[(day, currency)][1] += billed
    assert allocated and allocated.keys() == owed.keys()
    for key, (effective, billed) in owed.items():
        assert allocated[key] == [effective, billed], key
    for day in simulated_ledger.days:
        rows = ledger.query(sql("marts/checks/conservation"), {"day": day, **params}).collect()
        assert rows
        for r in rows:
            assert (r.allocated_e, r.allocated_b) == (r.bill_e, r.bill_b), (day, r)
            assert (r.single_day_pieces_e, r.single_day_pieces_b) == (r.single_day_e, r.single_day_b), (day, r)


def test_finance_views_over_spark_marts_equal_the_published_ones(simulated_ledger, spark_ledger, tmp_path):
    """Finance reads Spark's marts through a DuckDB file of views over their Parquet, its SQL unchanged
    (publish.create_finance_views), and gets the published warehouse's finance views row for row."""
    from pipelines.engines.spark.parquet import create_views
    from pipelines.lib.config import load_config
    from pipelines.lib.publish import FINANCE_VIEWS, create_finance_views

    ledger, _ = spark_ledger
    published = simulated_ledger.warehouse.with_name(f"{simulated_ledger.warehouse.stem}.published.duckdb")
    views = tmp_path / "spark_published.duckdb"
    with duckdb.connect(str(views)) as con:
        create_views(con, ledger.root, [*MARTS, "marts/dim_ledger_categories"])
        # ops stays DuckDB's bookkeeping (docs/spark.md#not-built-yet): copied as published
        con.execute(f"ATTACH '{published}' AS pub (READ_ONLY)")
        con.execute("CREATE SCHEMA ops")
        con.execute("CREATE TABLE ops.landed_files AS SELECT * FROM pub.ops.landed_files")
        create_finance_views(con, load_config(simulated_ledger.config))
        compared = 0
        for view in FINANCE_VIEWS:
            result = compare_rows(con, f"SELECT * FROM pub.finance.{view}", f"SELECT * FROM finance.{view}",
                                  f"finance.{view}")
            assert not result.problems, f"finance.{view}: " + "; ".join(result.problems)
            compared += result.rows
    assert compared > 0


@pytest.mark.parametrize("a, b, by_column", [
    (7, 2, True), (-7, 2, True), (7, -2, True), (-7, -2, True), (0, 5, True),
    (300_000 * 10**18, 36, True),               # a month of a $300,000 node's depreciation, in 1e-18 units
    (2**64 + 12345, 3, True), (10**30 - 1, 10**15 + 7, True), (10**29 + 17, 1, True),
    (-(10**27) + 3, 999_999_937, True),
    (10**38 - 1, 10**12, False),                # 38 digits: by a constant (a column fails loudly: below)
    (-(10**36) + 1, 7, False),                 # by a 1-digit constant: 36 integer digits
])
def test_integer_division_on_spark_is_exact(spark_session, a, b, by_column):
    """DuckDB's `a // b` (toward zero) as the transform writes it — by a column and by a constant —
    against Python's exact integers."""
    import sqlglot

    from pipelines.engines.spark.transpile import to_spark

    want = abs(a) // abs(b) * (-1 if (a < 0) != (b < 0) else 1)
    spark_session.sql("SELECT CAST(:a AS DECIMAL(38, 0)) AS a, CAST(:b AS DECIMAL(38, 0)) AS b",
                      args={"a": Decimal(a), "b": Decimal(b)}).createOrReplaceTempView("t")
    if by_column:
        by_column_sql = to_spark(sqlglot.parse_one("SELECT a // b AS q FROM t", read="duckdb"))
        assert spark_session.sql(by_column_sql).collect()[0].q == want
    if b > 0:
        by_constant = sqlglot.parse_one(f"SELECT a // {b} AS q FROM t", read="duckdb")  # b: an int of the test
        assert spark_session.sql(to_spark(by_constant)).collect()[0].q == want


def test_integer_division_past_its_range_fails_loudly(spark_session):
    """By a column, a quotient the 38 digits of DECIMAL cannot carry through the correction is an error
    (ANSI), never a wrong split."""
    import sqlglot

    from pipelines.engines.spark.transpile import to_spark

    spark_session.sql("SELECT CAST(:a AS DECIMAL(38, 0)) AS a, CAST(:b AS DECIMAL(38, 0)) AS b",
                      args={"a": Decimal(10**38 - 1), "b": Decimal(10**12)}).createOrReplaceTempView("t")
    with pytest.raises(Exception, match="NUMERIC_VALUE_OUT_OF_RANGE|ARITHMETIC_OVERFLOW"):
        spark_session.sql(to_spark(sqlglot.parse_one("SELECT a // b AS q FROM t", read="duckdb"))).collect()
