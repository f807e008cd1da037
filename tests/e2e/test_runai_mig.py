"""Run:ai MIG pods through the ledger: on an A100-40GB in MIG mode, a pod that states its instance only
as `runai-mig-device` (1g.5gb, all day) and one that states `nvidia.com/mig-3g.20gb: "1"` beside it
(00:00–12:00) hold 1/7 and 3/7 of the GPU; the rest of the GPU is the node's idle.

By hand: $7.00 an hour, $168 the day. 1g.5gb: 1/7 × 24 h = $24 and 86400/7 GPU-seconds; 3g.20gb:
3/7 × 12 h = $36 and 3/7 × 43200 GPU-seconds; idle_unallocated the other $108."""

import json
from datetime import date
from decimal import Decimal as D

from tests.e2e.test_ledger_scenarios import _run
from tests.support.scenario_builder import Landing, utc

NOV2 = date(2026, 11, 2)


def _mig_annotations(profile: str, gpuindex, *, count: bool) -> dict:
    device = {"name": f"nvidia.com/mig-{profile}", "position": 0, "gpuamount": int(profile[0]),
              "gpuinstanceid": 0, "gpuindex": gpuindex, "gputype": "A100-40GB"}
    return {"received-resource-type": "MigInstance", "runai-allocated-gpus": "0", "runai-allocated-mig-gpus": "1",
            "runai-mig-device": json.dumps(device), **({f"nvidia.com/mig-{profile}": "1"} if count else {})}


def test_runai_mig_pods_hold_their_instances_share_of_the_gpu(tmp_path):
    """Was: both pods dropped as `no_gpu`: the whole $168 idle."""
    L = Landing(tmp_path)
    L.config = {"teams": {"serving": {"projects": ["inf"]}, "debugging": {"projects": ["dbg"]}}}
    L.node("migr", cluster="k1", gpu_model="NVIDIA A100-SXM4-40GB", gpu_count=1, pool="pool-r", team="rteam")
    L.node_hours("migr", utc(2026, 11, 2), 24, D("7.00"))
    L.pod("k1", "runai-inf", "small-0-0", node="migr", start=utc(2026, 11, 2), end=utc(2026, 11, 3),
          annotations=_mig_annotations("1g.5gb", 0, count=False), labels={"project": "inf"})
    L.pod("k1", "runai-dbg", "mid-0-0", node="migr", start=utc(2026, 11, 2), end=utc(2026, 11, 2, 12),
          annotations=_mig_annotations("3g.20gb", "0", count=True), labels={"project": "dbg"})
    ledger = _run(L, [NOV2])
    by_project = {}
    for project, category, cost, seconds in ledger.rows(
            "SELECT project, category, sum(effective_cost), sum(gpu_seconds) FROM marts.fct_cost_daily "
            "WHERE day = ? GROUP BY ALL", [NOV2]):
        key = "idle" if category == "idle_unallocated" else project
        got = by_project.setdefault(key, [D(0), 0.0])
        got[0] += cost
        got[1] += seconds or 0.0
    assert set(by_project) == {"inf", "dbg", "idle"}
    assert by_project["inf"][0] == D(24) and abs(by_project["inf"][1] - 86400 / 7) < 1e-3
    assert by_project["dbg"][0] == D(36) and abs(by_project["dbg"][1] - 3 * 43200 / 7) < 1e-3
    assert by_project["idle"][0] == D(108)
