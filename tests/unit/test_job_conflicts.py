"""intermediate/int_job_conflicts over given jobs: a job left out holds no GPUs, a job asking more GPUs
than its node has is left out with that reason, and no quarantine row it writes lacks a reason."""

from datetime import date, datetime, timedelta

import polars as pl

from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import run_sql
from tests.support.sql_steps import given, rows_of, warehouse

DAY = date(2026, 10, 29)
T0 = datetime(2026, 10, 29, 1)
JOB_SCHEMA = {"day": pl.Date, "job_uid": pl.String, "job_id": pl.String, "source_file": pl.String,
              "source_row": pl.Int64, "start_ts": pl.Datetime("us"), "end_eff": pl.Datetime("us"),
              "gpus": pl.Int32, "gpu_slices": pl.List(pl.Int32), "node_count": pl.Int32, "hosts": pl.List(pl.String)}


def _job(job_id, start_h, end_h, gpus, hosts=("h1",)):
    return {"day": DAY, "job_uid": f"c:{job_id}", "job_id": job_id, "source_file": "scheduler/slurm/c/sacct.psv",
            "source_row": int(job_id), "start_ts": T0 + timedelta(hours=start_h), "end_eff": T0 + timedelta(hours=end_h),
            "gpus": gpus, "gpu_slices": None, "node_count": len(hosts), "hosts": list(hosts)}


def _conflicts(jobs, gpu_count=8):
    con = warehouse()
    given(con, "intermediate.int_job_allocations", jobs, JOB_SCHEMA)
    given(con, "intermediate.int_nodes", [{"day": DAY, "hostname": "h1", "gpu_count": gpu_count}])
    params = {"day": DAY, **OrgConfig().sql_params()}
    rows = rows_of(con, "intermediate/int_job_conflicts", params)
    con.register("conflicts", pl.DataFrame(rows) if rows else pl.DataFrame(schema={"day": pl.Date}))
    con.execute("CREATE TABLE intermediate.int_job_conflicts AS SELECT * FROM conflicts")
    run_sql(con, "intermediate/int_job_conflicts/20_conflicts_quarantined", params)
    quarantined = con.sql("SELECT row_ref, reason FROM ops.quarantine ORDER BY row_ref").fetchall()
    return {r["job_id"]: r for r in rows}, quarantined


def test_a_job_left_out_holds_no_gpus_for_the_jobs_after_it():
    """Was: job 2 (left out: job 1 holds the GPUs) still held them, so jobs 3 and 4, which start after
    job 1 ended, were quarantined as held by job 2 and lost their GPU-seconds."""
    conflicts, quarantined = _conflicts([_job("1", 0, 2, 8), _job("2", 1, 6, 8),
                                         _job("3", 3, 4, 8), _job("4", 4, 5, 8)])
    assert list(conflicts) == ["2"]
    assert conflicts["2"]["holders"] == ["1"]
    assert [ref for ref, _ in quarantined] == ["line 2"]


def test_a_chain_of_exclusions_settles_in_start_order():
    # 1 holds 2 out; 2 left out frees 3; 3 kept holds 4 out; 4 left out frees 5
    conflicts, _ = _conflicts([_job("1", 0, 2, 8), _job("2", 1, 3, 8), _job("3", 2, 4, 8),
                               _job("4", 3, 5, 8), _job("5", 4.5, 6, 8)])
    assert sorted(conflicts) == ["2", "4"]
    assert conflicts["4"]["holders"] == ["3"]


def test_more_gpus_than_the_node_has_is_left_out_with_a_plain_reason():
    """Was: `NOT NULL constraint failed: quarantine.reason` (no holders, so the reason was NULL) and the
    day failed."""
    conflicts, quarantined = _conflicts([_job("1", 0, 2, 16), _job("2", 1, 3, 4)])
    assert list(conflicts) == ["1"]
    assert quarantined == [("line 1", "AllocTRES asks for 16 GPU(s) on h1 but node h1 has 8 GPUs; left out of the "
                                      "ledger")]


def test_no_conflict_row_writes_a_null_reason():
    con = warehouse()
    row = {"day": DAY, "job_uid": "c:1", "job_id": "1", "source_file": "f", "source_row": 1, "hostname": "h1",
           "start_ts": None, "gpus": None, "held": None, "capacity": None, "holders": None}
    given(con, "intermediate.int_job_conflicts", [row], {
        "day": pl.Date, "job_uid": pl.String, "job_id": pl.String, "source_file": pl.String, "source_row": pl.Int64,
        "hostname": pl.String, "start_ts": pl.Datetime("us"), "gpus": pl.Decimal(18, 3), "held": pl.Decimal(18, 3),
        "capacity": pl.Int32, "holders": pl.List(pl.String)})
    run_sql(con, "intermediate/int_job_conflicts/20_conflicts_quarantined", {"day": DAY})
    [(reason,)] = con.sql("SELECT reason FROM ops.quarantine").fetchall()
    assert reason.startswith("claims more GPUs of a node than it has free")
