"""The ledger on Apache Spark equals the ledger on DuckDB, cent for cent (docs/spark.md): the small
simulated ledger (2 days, 4 nodes) is built by DuckDB as usual (the session fixture), then run again by
the same Dagster job with `--engine spark`, its two days at once in two processes as a backfill runs
them: the same sql/ files, transpiled, on local Spark sessions, writing Parquet by day. Every intermediate table and mart is compared row for row with DuckDB's, reading
Spark's Parquet back with DuckDB; the published files are compared, finance views included (a warehouse moving
from one engine to the other and back is test_spark_cluster.py's). Select with `-m spark`; skipped where
Java or pyspark is absent."""

from __future__ import annotations

import os
import shutil
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests.support.spark_compare import compare_rows, compare_table

from pipelines.defs.finance.assets import MARTS as PUBLISHED

pytestmark = pytest.mark.spark

INTERMEDIATE = ["intermediate/int_bill_line_hours", "intermediate/int_nodes", "intermediate/int_node_hours",
                "intermediate/int_job_allocations", "intermediate/int_gpu_seconds",
                "intermediate/int_node_hour_energy", "intermediate/int_bill_line_placements",
                "intermediate/int_config_cost_lines", "intermediate/int_storage_costs", "intermediate/int_cost_allocations"]
# every mart the published file holds, so a new mart is compared without being listed here again
MARTS = [t for t in PUBLISHED if t.startswith("marts/")]


def _spark_or_skip():
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java (17) on PATH: `java` was not found")
    try:
        import pyspark  # noqa: F401
    except ImportError:
        pytest.skip("pyspark is not installed (pip install -e '.[spark]')")


@pytest.fixture(scope="module")
def spark_ledger(simulated_ledger, tmp_path_factory):
    """The simulated ledger's days run again through the Dagster job with `--engine spark`, as a backfill
    runs them: two `gpuledger run` processes, one per day, started together on one new warehouse. The
    staging assets parse the landing zone into DuckDB, every intermediate table and mart is computed on
    a local Spark session (`local[2]`) as Parquet under `<warehouse>.spark/`, the checks run, the file
    is published. The Parquet is compared with DuckDB's tables below."""
    _spark_or_skip()
    import subprocess
    import sys

    from pipelines.engines.spark import daily
    from pipelines.engines.spark.runner import SparkLedger
    from pipelines.lib.config import load_config
    from pipelines.lib.warehouse import PROJECT_ROOT

    root = tmp_path_factory.mktemp("spark_run")
    warehouse = root / "warehouse.duckdb"
    home = root / "dagster_home"
    home.mkdir()
    shutil.copy(PROJECT_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPULEDGER_")} | {"DAGSTER_HOME": str(home)}
    with dagster_instance(home):  # its storage made once, as the daemon does: two runs creating it race
        pass
    began = time.monotonic()
    runs = [subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "run", "--landing", str(simulated_ledger.landing),
         "--config", str(simulated_ledger.config), "--warehouse", str(warehouse), "--start", str(day),
         "--engine", "spark"], env=env, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for day in simulated_ledger.days]
    outputs = [run.communicate(timeout=900)[0] for run in runs]
    print(f"two gpuledger run --engine spark at once, a day each: {time.monotonic() - began:.0f} s")
    # exit 0: every check of both days passed on Spark's marts (contracts, conservation, expectations)
    assert [run.returncode for run in runs] == [0, 0], "\n".join(o[-2000:] for o in outputs)
    cfg = load_config(simulated_ledger.config)
    ledger = SparkLedger(daily.shared_session(cfg), root / "warehouse.spark")
    ledger.register_all()
    yield SparkRun(ledger, cfg.sql_params(), warehouse, cfg, _spark_spans(home))
    daily.stop_sessions()


def _spark_spans(home: Path) -> dict[str, list[tuple[float, float]]]:
    """When each ledger step's Spark work began and ended, per day, from the runs' metadata in the
    Dagster instance at `home`."""
    import dagster as dg

    spans: dict[str, list[tuple[float, float]]] = {}
    with dagster_instance(home) as instance:
        for record in instance.get_runs():
            for entry in instance.all_logs(record.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
                meta = entry.dagster_event.step_materialization_data.materialization.metadata
                if "spark_began" in meta:
                    spans.setdefault(record.tags["dagster/partition"], []).append(
                        (meta["spark_began"].value, meta["spark_ended"].value))
    return spans


@contextmanager
def dagster_instance(home: Path):
    """The Dagster instance of the DAGSTER_HOME `home` (its storage is named by the variable)."""
    import dagster as dg

    saved = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.get() as instance:
            yield instance
    finally:
        if saved is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = saved


@dataclass
class SparkRun:
    ledger: object
    params: dict
    warehouse: Path
    cfg: object
    spark_spans: dict  # day -> (began, ended) of each ledger step's Spark work

    @property
    def published(self) -> Path:
        return self.warehouse.with_name(f"{self.warehouse.stem}.published.duckdb")


@contextmanager
def engine(name: str):
    from pipelines.lib.config import ENGINE_ENV

    saved = os.environ.get(ENGINE_ENV)
    os.environ[ENGINE_ENV] = name
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(ENGINE_ENV, None)
        else:
            os.environ[ENGINE_ENV] = saved


@pytest.fixture(scope="module")
def spark_session(spark_ledger):
    return spark_ledger.ledger.spark


@pytest.mark.parametrize("table", INTERMEDIATE + MARTS)
def test_spark_table_equals_duckdb(simulated_ledger, spark_ledger, table):
    ledger = spark_ledger.ledger
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

    ledger, params = spark_ledger.ledger, spark_ledger.params
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


def test_published_file_of_the_spark_run_equals_duckdbs(simulated_ledger, spark_ledger):
    """The file the Spark run published — its marts views over Spark's Parquet, the finance views made
    on them, unchanged, and ops.quarantine, whose notes of the ledger steps ran on DuckDB — gives what
    the DuckDB run's published file gives, row for row."""
    from pipelines.lib.warehouse.publish import FINANCE_VIEWS

    duck = simulated_ledger.warehouse.with_name(f"{simulated_ledger.warehouse.stem}.published.duckdb")
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{duck}' AS duck (READ_ONLY)")
        con.execute(f"ATTACH '{spark_ledger.published}' AS spark (READ_ONLY)")
        kinds = dict(con.execute("SELECT view_name, 'view' FROM duckdb_views() WHERE database_name = 'spark' "
                                 "AND schema_name = 'marts'").fetchall())
        assert set(kinds) == {t.split("/")[1] for t in MARTS}, "the published marts are views over Parquet"
        compared = {}
        for name in [*MARTS, *(f"finance/{v}" for v in FINANCE_VIEWS), "marts/dim_ledger_categories",
                     "ops/quarantine"]:
            qualified = name.replace("/", ".")
            result = compare_rows(con, f"SELECT * FROM duck.{qualified}", f"SELECT * FROM spark.{qualified}", name)
            assert not result.problems, f"{name}: " + "; ".join(result.problems)
            compared[name] = result.rows
    assert compared["finance/reconciliation_daily"] > 0 and compared["marts/fct_cost_daily"] > 0


def test_readers_of_the_spark_file_read_its_parquet_and_nothing_else(spark_ledger, capsys):
    """`gpuledger query` opens the published file in the read-only sandbox: the marts' Parquet folder
    is let through (ops.parquet_roots), any other file stays refused."""
    from pipelines.cli import main

    assert main(["query", "SELECT count(*) AS n FROM marts.fct_cost_daily", "--warehouse",
                 str(spark_ledger.published), "--csv"]) == 0
    assert int(capsys.readouterr().out.split()[-1]) > 0
    assert main(["query", "SELECT * FROM read_csv('/etc/hostname')", "--warehouse",
                 str(spark_ledger.published)]) != 0
    assert "reaches outside the warehouse" in capsys.readouterr().err


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


def test_export_and_reports_read_spark_marts_unchanged(simulated_ledger, spark_ledger, tmp_path):
    """`gpuledger export focus` (the live warehouse) and a team's waste report (the published file) give
    the same bytes whichever engine computed the marts: both read Spark's through the views."""
    from pipelines.cli import main

    outputs = {}
    for name, live in (("duckdb", simulated_ledger.warehouse), ("spark", spark_ledger.warehouse)):
        published = live.with_name(f"{live.stem}.published.duckdb")
        out = tmp_path / name
        assert main(["export", "focus", "--start", str(simulated_ledger.days[0]), "--end", str(simulated_ledger.days[-1]),
                     "--out", str(out / "focus.csv"), "--warehouse", str(live)]) == 0
        assert main(["report", "--team", "research", "--month", simulated_ledger.days[0].strftime("%Y-%m"),
                     "--warehouse", str(published), "--out", str(out / "reports")]) == 0
        outputs[name] = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert len(outputs["spark"]) >= 4  # the export, and the report as HTML, Markdown and CSV
    assert outputs["duckdb"].keys() == outputs["spark"].keys()
    for path in outputs["duckdb"]:
        assert sorted(outputs["duckdb"][path].splitlines()) == sorted(outputs["spark"][path].splitlines()), path


def test_several_days_run_at_once_on_spark(simulated_ledger, spark_ledger):
    """The fixture's two runs went on at once: the Spark part of a ledger step holds no writer lock, so
    their Spark work overlapped in time (under the lock it never could: with it held around Spark's
    work this fails). Both days' marts equal DuckDB's (test_spark_table_equals_duckdb)."""
    first, second = (spark_ledger.spark_spans[str(day)] for day in simulated_ledger.days)
    assert len(first) == len(second) == len(INTERMEDIATE + MARTS) + 1  # int_job_conflicts too
    assert any(a0 < b1 and b0 < a1 for a0, a1 in first for b0, b1 in second), "Spark's work never overlapped"
