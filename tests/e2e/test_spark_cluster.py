"""The ledger on a real Spark standalone cluster (docs/spark.md): a master and a worker started from the
pyspark distribution on 127.0.0.1; the config's `spark.master` names the cluster (`spark://127.0.0.1:<port>`)
and the Dagster job runs the first day of the simulated ledger with `--engine spark`, its tables computed
on the worker's executor; every mart of that day equals DuckDB's cent for cent; the cluster is stopped
afterwards. Select with `-m spark`."""

from __future__ import annotations

import duckdb
import pytest
import yaml

from pipelines.lib.strict_yaml import dump_yaml
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


def test_a_day_on_a_standalone_cluster_equals_duckdb(simulated_ledger, cluster, tmp_path):
    from pipelines.engines.spark import daily

    config = yaml.safe_load(simulated_ledger.config.read_text()) or {}
    config["spark"] = {"master": cluster.url, "conf": {"spark.executor.memory": "1g"}}
    (tmp_path / "gpuledger.yaml").write_text(dump_yaml(config))
    day = simulated_ledger.days[0]
    daily.stop_sessions()  # a session of another master in this process would be reused
    try:
        with engine("spark"):
            failed = run_pipeline(simulated_ledger.landing, tmp_path / "warehouse.duckdb", tmp_path / "gpuledger.yaml",
                                  [day])
        assert not failed, failed
        (spark,) = daily.active_sessions()
        assert spark.sparkContext.master == cluster.url
        # the work ran on the worker's executor, not in the driver
        assert f"Asked to launch executor {spark.sparkContext.applicationId}/" in cluster.log("worker")
    finally:
        daily.stop_sessions()
    compared = 0
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{simulated_ledger.warehouse}' AS duck (READ_ONLY)")
        con.execute(f"ATTACH '{tmp_path / 'warehouse.duckdb'}' AS spark (READ_ONLY)")
        for table in MARTS:
            qualified = table.replace("/", ".")
            result = compare_rows(con, f"SELECT * FROM duck.{qualified} WHERE day = DATE '{day}'",
                                  f"SELECT * FROM spark.{qualified}", table)
            assert not result.problems, f"{table}: " + "; ".join(result.problems)
            compared += result.rows
    assert compared > 0
    cluster.close()
    assert all(proc.poll() is not None for _, proc in cluster.procs) and not cluster.procs
