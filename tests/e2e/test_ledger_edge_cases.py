"""Edge cases through the whole ledger, computed by hand: a Kubernetes pod (the DCGM exporter labels
its GPUs with `namespace/pod`, the pod's job id; its namespace maps to a project), two jobs claiming
the same GPUs, and a GPU model the catalog does not know."""

import json
from datetime import date
from decimal import Decimal

import duckdb

from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)


def test_a_pod_is_a_job_of_the_ledger(tmp_path):
    L = Landing(tmp_path)
    L.config = {"teams": {"ml": {"projects": ["llm"]}}, "kubernetes": {"namespaces": {"ml-train": "llm"}}}
    L.node("k8s-gpu-1", cluster="k1")
    L.node_hours("k8s-gpu-1", utc(2026, 11, 2), 24, "36")  # $36/h = $0.00125 per GPU-second
    # busy 02:00–06:00, then stuck at 0 % until the OOM kill at 08:00
    L.telemetry("k8s-gpu-1", [DAY], [Activity(utc(2026, 11, 2, 2), utc(2026, 11, 2, 6), "ml-train/train-0", True),
                                     Activity(utc(2026, 11, 2, 6), utc(2026, 11, 2, 8), "ml-train/train-0", False)])
    L.write()
    pod = {
        "metadata": {"name": "train-0", "namespace": "ml-train", "uid": "u-1", "creationTimestamp": "2026-11-02T01:59:00Z",
                     "labels": {"job-name": "train"}},
        "spec": {"nodeName": "k8s-gpu-1", "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]},
        "status": {"phase": "Failed", "startTime": "2026-11-02T02:00:00Z", "containerStatuses": [
            {"name": "c", "restartCount": 0, "state": {"terminated": {
                "reason": "OOMKilled", "exitCode": 137, "startedAt": "2026-11-02T02:00:00Z",
                "finishedAt": "2026-11-02T08:00:00Z"}}}]},
    }
    pods = L.landing / "scheduler" / "kubernetes" / "k1" / "pods.jsonl"
    pods.parent.mkdir(parents=True)
    pods.write_text(json.dumps(pod) + "\n")

    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        (job,) = con.execute(
            """SELECT job_id, team, project, state, gpu_seconds, failed_job_gpu_seconds, allocated_idle_gpu_seconds,
                      effective_cost FROM marts.fct_job_cost""").fetchall()
        cells = dict(((t, c), (e, g)) for t, c, e, g in con.execute(
            "SELECT team, category, effective_cost, gpu_seconds FROM marts.fct_cost_daily").fetchall())
    # 6 h × 8 GPUs; the busy 4 h of a job that failed unresumed are failed_job, the 2 h at 0 % are idle
    assert job == ("ml-train/train-0", "ml", "llm", "OUT_OF_MEMORY", 172800.0, 115200.0, 57600.0, Decimal("216"))
    assert cells[("ml", "failed_job")] == (Decimal("144"), 115200.0)
    assert cells[("ml", "allocated_idle")] == (Decimal("72"), 57600.0)
    assert cells[("_unallocated", "idle_unallocated")] == (Decimal("648"), 518400.0)  # the other 18 h


def test_two_jobs_claiming_the_same_gpus_count_them_once(tmp_path):
    L = Landing(tmp_path)
    L.node("n1")
    L.node_hours("n1", utc(2026, 11, 2), 24, "36")
    # job 10 holds all 8 GPUs 00:00–12:00; job 11 claims 8 more on the same node from 06:00
    L.job("c1", "10", account="p1", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00", state="COMPLETED", host="n1")
    L.job("c1", "11", account="p2", start="2026-11-02T06:00:00", end="2026-11-02T09:00:00", state="COMPLETED", host="n1")
    L.telemetry("n1", [DAY], [Activity(utc(2026, 11, 2), utc(2026, 11, 2, 12), "10", True)])
    L.write()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        (row_ref, reason), = con.execute(
            "SELECT row_ref, reason FROM ops.quarantine WHERE file = 'scheduler/slurm/c1/sacct.psv'").fetchall()
        seconds = dict(con.execute("SELECT project, sum(gpu_seconds) FROM marts.fct_cost_daily GROUP BY 1").fetchall())
        total = con.execute("SELECT sum(effective_cost), sum(gpu_seconds) FROM marts.fct_cost_daily").fetchall()[0]
    assert row_ref == "line 3"
    assert reason.startswith("claims GPUs of n1 already held: 8 GPU(s) at 2026-11-02T06:00:00Z while 8 of its 8 are "
                             "held by job(s) 10")
    assert seconds == {"p1": 8 * 12 * 3600.0, "_unallocated": 8 * 12 * 3600.0}  # never more than the node's GPUs
    assert total == (Decimal("864"), 8 * 24 * 3600.0)


def test_a_gpu_model_nobody_knows_is_named_and_leaves_mfu_null(tmp_path):
    L = Landing(tmp_path)
    L.node("n1", gpu_model="NVIDIA Quantum Abacus 9000")
    L.node_hours("n1", utc(2026, 11, 2), 24, "36")
    L.job("c1", "10", account="p1", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00", state="COMPLETED",
          host="n1", comment="run_id=r1")
    L.telemetry("n1", [DAY], [Activity(utc(2026, 11, 2), utc(2026, 11, 2, 12), "10", True)])
    L.event("r1", "run_config", utc(2026, 11, 2), model={"params": 1e9, "layers": 8, "heads": 8, "head_dim": 64,
                                                          "seq_len": 1024}, dtype="bf16", project="p1")
    L.event("r1", "step", utc(2026, 11, 2, 1), job_id="10", step=1, tokens=1000)
    L.write()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        (file, row_ref, reason), = con.execute(
            "SELECT file, row_ref, reason FROM ops.quarantine WHERE reason LIKE 'GPU model%'").fetchall()
        mfu, cost = con.execute("SELECT mfu, effective_cost FROM marts.fct_run_efficiency_daily").fetchall()[0]
    assert (file, row_ref) == ("inventory/nodes.csv", "row 1")
    assert reason.startswith("GPU model 'NVIDIA Quantum Abacus 9000' of node n1 is not in the GPU catalog")
    assert mfu is None and cost == Decimal("432")  # cost still attributed: 12 h × $36
