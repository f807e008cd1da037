"""The ledger on a real Spark standalone cluster (docs/spark.md): a master and a worker started from the
pyspark distribution on 127.0.0.1; the config's `spark.master` names the cluster (`spark://127.0.0.1:<port>`).
A warehouse DuckDB built moves to Spark and back keeping its days: its last day run again by the Dagster job
with `--engine spark`, on the worker's executor, moves the other days' rows to Parquet and recomputes the
day; every mart, now a view, equals DuckDB's cent for cent; run on DuckDB again, the views become tables
holding the same rows. The cluster is stopped afterwards. Select with `-m spark`.

(One Spark day serves both stories: a Spark day costs the suite minutes of CPU on two cores.)"""

from __future__ import annotations

import shutil

import duckdb
import pytest
import yaml

from pipelines.lib.config.strict_yaml import dump_yaml
from tests.e2e.test_spark_equal import MARTS, _spark_or_skip, engine
from tests.support.pipeline import run_pipeline
from tests.support.spark_cluster import SparkStandalone
from tests.support.spark_compare import compare_rows

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    _spark_or_skip()
    standalone = SparkStandalone(tmp_path_factory.mktemp("spark_standalone")).start()
    yield standalone
    standalone.close()


def _marts_equal_duckdbs(simulated_ledger, warehouse, kind: str, label: str) -> int:
    """Every mart of `warehouse` is a `kind` (VIEW, BASE TABLE) holding DuckDB's rows of every day."""
    compared = 0
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{simulated_ledger.warehouse}' AS duck (READ_ONLY)")
        con.execute(f"ATTACH '{warehouse}' AS moved (READ_ONLY)")
        kinds = dict(con.execute(
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_catalog = 'moved' "
            "AND table_schema = 'marts'").fetchall())
        for table in MARTS:
            qualified = table.replace("/", ".")
            assert kinds[table.split("/")[1]] == kind, (label, table)
            result = compare_rows(con, f"SELECT * FROM duck.{qualified}", f"SELECT * FROM moved.{qualified}", table)
            assert not result.problems, f"{label}: {table}: " + "; ".join(result.problems)
            compared += result.rows
        days = {d for (d,) in con.execute("SELECT DISTINCT day FROM moved.marts.fct_cost_daily").fetchall()}
        assert days == set(simulated_ledger.days), label
    return compared


def test_a_warehouse_moves_to_a_standalone_cluster_and_back_keeping_its_days(simulated_ledger, cluster, tmp_path):
    from pipelines.engines.spark import daily

    config = yaml.safe_load(simulated_ledger.config.read_text()) or {}
    config["spark"] = {"master": cluster.url, "conf": {"spark.executor.memory": "1g"}}
    (tmp_path / "gpuledger.yaml").write_text(dump_yaml(config))
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copy(simulated_ledger.warehouse, warehouse)
    day = simulated_ledger.days[-1]
    daily.stop_sessions()  # a session of another master in this process would be reused
    try:
        with engine("spark"):
            failed = run_pipeline(simulated_ledger.landing, warehouse, tmp_path / "gpuledger.yaml", [day])
        assert not failed, failed
        (spark,) = daily.active_sessions()
        assert spark.sparkContext.master == cluster.url
        # the work ran on the worker's executor, not in the driver
        assert f"Asked to launch executor {spark.sparkContext.applicationId}/" in cluster.log("worker")
    finally:
        daily.stop_sessions()
    assert _marts_equal_duckdbs(simulated_ledger, warehouse, "VIEW", "spark") > 0
    cluster.close()
    assert all(proc.poll() is not None for _, proc in cluster.procs) and not cluster.procs

    with engine("duckdb"):
        assert not run_pipeline(simulated_ledger.landing, warehouse, tmp_path / "gpuledger.yaml", [day])
    assert _marts_equal_duckdbs(simulated_ledger, warehouse, "BASE TABLE", "duckdb") > 0
