"""The simulator with one cluster (west) under Kubernetes: pod exports instead of sacct, `namespace/pod` job ids
in telemetry, and the real pipeline's ledger against the simulator's ground truth."""
from __future__ import annotations

import csv
import datetime as dt
import json
from collections import defaultdict
from pathlib import Path

import duckdb
import polars as pl
import pytest

from simulator import simulate
from tests.support.pipeline import assert_gpu_seconds_match_truth, run_pipeline

# a minute or more: runs in CI too (`-m "not slow"` leaves it out of a quick local run)
pytestmark = pytest.mark.slow

START = dt.date(2026, 3, 2)
DAYS = 2
NODES = 4
PHASES = {"Succeeded", "Failed", "Running", "Pending"}


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    out = tmp_path_factory.mktemp("kube")
    manifest = simulate(out, START, DAYS, nodes=NODES, seed=7, kubernetes_cluster="west")
    return out, manifest


def _pods(out: Path) -> list[dict]:
    files = sorted((out / "landing/scheduler/kubernetes/west").glob("pods_*.jsonl"))
    return [json.loads(ln) for p in files for ln in p.read_text().splitlines()]


def test_pod_files(sim):
    out, manifest = sim
    files = sorted((out / "landing/scheduler/kubernetes/west").glob("pods_*.jsonl"))
    assert [p.name for p in files] == [f"pods_{START + dt.timedelta(days=i)}.jsonl" for i in range(DAYS)]
    pods = _pods(out)
    assert pods and len(pods) == manifest["kubernetes"]["rows"]
    assert len({(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods}) == manifest["kubernetes"]["pods"]
    for p in pods:
        md, spec, st = p["metadata"], p["spec"], p["status"]
        assert md["namespace"].startswith("team-") and md["name"] and md["labels"]["project"]
        assert int(spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]) >= 1
        assert st["phase"] in PHASES
        # a pod is bound to a node once scheduled; pending pods are not
        assert ("nodeName" in spec) == (st["phase"] != "Pending"), p
        if st["phase"] in ("Succeeded", "Failed"):
            term = st["containerStatuses"][0]["state"]["terminated"]
            assert term["finishedAt"] >= term["startedAt"] == st["startTime"]
    assert {p["status"]["phase"] for p in pods} >= {"Succeeded", "Failed"}
    # west has no sacct files; east keeps its own
    assert not (out / "landing/scheduler/slurm/west").exists()
    assert list((out / "landing/scheduler/slurm/east").glob("*.psv"))
    assert "project_labels: [project]" in (out / "gpuledger.yaml").read_text()   # pods name their project


def test_telemetry_names_pods(sim):
    out, _ = sim
    pods = {f'{p["metadata"]["namespace"]}/{p["metadata"]["name"]}': p for p in _pods(out)}
    df = pl.read_parquet(out / "landing/telemetry/dcgm/**/*.parquet")
    west = df.filter(pl.col("hostname").str.starts_with("west-") & pl.col("hpc_job").is_not_null())
    labels = set(west["hpc_job"].unique().to_list())
    assert labels and labels <= pods.keys()
    # each label is seen on the node its pod ran on
    for host, job in west.select("hostname", "hpc_job").unique().iter_rows():
        assert pods[job]["spec"]["nodeName"] == host
    east = df.filter(pl.col("hostname").str.starts_with("east-") & pl.col("hpc_job").is_not_null())
    assert all("/" not in j for j in east["hpc_job"].unique().to_list())


def test_truth_adds_up(sim):
    out, manifest = sim
    per_day = defaultdict(float)
    with (out / "truth/gpu_seconds.csv").open() as fh:
        for r in csv.DictReader(fh):
            per_day[r["day"]] += float(r["gpu_seconds"])
    assert len(per_day) == DAYS
    # every GPU-second of the billed fleet and of the nodes the config costs (simulator/offbill.py)
    config_costed = manifest["truth"]["config_costed_gpu_seconds_per_day"]
    assert config_costed > 0
    for v in per_day.values():
        assert v == pytest.approx(8 * 86400 * NODES + config_costed)
    assert manifest["truth"]["billed_gpu_seconds_per_day"] == 8 * 86400 * NODES


def test_default_output_has_no_kubernetes(tmp_path):
    m = simulate(tmp_path, START, 1, nodes=2, seed=7)
    assert "kubernetes" not in m and not (tmp_path / "landing/scheduler/kubernetes").exists()


def _ledger_vs_truth(out: Path, start: dt.date, n_days: int) -> None:
    days = [start + dt.timedelta(days=i) for i in range(n_days)]
    warehouse = out / "warehouse.duckdb"
    failed = run_pipeline(out / "landing", warehouse, out / "gpuledger.yaml", days)
    assert not failed, failed
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM staging.stg_scheduler__job_allocations WHERE cluster = 'west'").fetchall()[0][0]
    assert_gpu_seconds_match_truth(out, warehouse)


def test_ledger_matches_truth(sim):
    """4 nodes: west (2 nodes) runs single-node jobs only, one pod each."""
    out, _ = sim
    _ledger_vs_truth(out, START, DAYS)


def test_ledger_matches_truth_multi_node_runs(tmp_path):
    """8 nodes: west runs two-node training jobs as one pod per node, which the ledger must read as
    one attempt of the run (a rank-1 pod does not 'resume' its rank-0 sibling)."""
    from simulator import Knobs

    start = dt.date(2026, 10, 31)
    simulate(tmp_path, start, 2, nodes=8, seed=7, kubernetes_cluster="west",
             knobs=Knobs(interrupt_rate_per_gpu_day=0.3, stall_rate_per_job_day=1.0))
    _ledger_vs_truth(tmp_path, start, 2)
