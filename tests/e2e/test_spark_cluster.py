"""The ledger's SQL on a real Spark standalone cluster (docs/spark.md): a master and a worker started
from the pyspark distribution on 127.0.0.1, the driver connected with `spark://127.0.0.1:<port>`, one
day of the simulated ledger's intermediate tables and `marts.fct_cost_daily` built there, equal to
DuckDB's cent for cent; the cluster is stopped afterwards. Select with `-m spark`."""

from __future__ import annotations

import duckdb
import pytest

from tests.e2e.test_spark_equal import BUILT_ONLY, INPUTS, INTERMEDIATE, _spark_or_skip
from tests.support.spark_cluster import SparkStandalone
from tests.support.spark_compare import compare_rows

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    _spark_or_skip()
    standalone = SparkStandalone(tmp_path_factory.mktemp("spark_standalone")).start()
    yield standalone
    standalone.close()


def test_a_day_on_a_standalone_cluster_equals_duckdb(simulated_ledger, cluster, tmp_path):
    from pipelines.engines.spark.parquet import export_tables, read_parquet_sql
    from pipelines.engines.spark.runner import SparkLedger, in_dependency_order, session
    from pipelines.lib.config import load_config

    spark = session(cluster.url, app="gpuledger-standalone-test")
    try:
        spark.sparkContext.setLogLevel("ERROR")
        assert spark.sparkContext.master == cluster.url
        with duckdb.connect(str(simulated_ledger.warehouse), read_only=True) as con:
            export_tables(con, tmp_path, INPUTS)
        ledger = SparkLedger(spark, tmp_path)
        ledger.register_all()
        day = simulated_ledger.days[0]
        params = {"day": day, **load_config(simulated_ledger.config).sql_params()}
        for table in in_dependency_order([*INTERMEDIATE, *BUILT_ONLY, "marts/fct_cost_daily"]):
            ledger.write_day(table, params)
        # the work ran on the worker's executor, not in the driver
        assert f"Asked to launch executor {spark.sparkContext.applicationId}/" in cluster.log("worker")
        with duckdb.connect(str(simulated_ledger.warehouse), read_only=True) as con:
            result = compare_rows(con, f"SELECT * FROM marts.fct_cost_daily WHERE day = DATE '{day.isoformat()}'",
                                  read_parquet_sql(tmp_path, "marts/fct_cost_daily"), "marts/fct_cost_daily")
        assert result.rows > 0
        assert not result.problems, "; ".join(result.problems)
    finally:
        spark.stop()
    cluster.close()
    assert all(proc.poll() is not None for _, proc in cluster.procs) and not cluster.procs
