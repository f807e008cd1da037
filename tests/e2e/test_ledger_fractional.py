"""Hand-computed ledger scenarios for shared GPUs (docs/ledger.md#fractional-gpus): a GPU's slices share
its GPU-seconds and cost by their share of it, and the slices no job holds are its `idle_unallocated`.

Every expected number is worked out on paper below from the landing files written here
(tests/support/scenario_builder.py), never from the pipeline's SQL. One landing zone, Nov 2 2026, three
nodes with their own pool owners and projects so nothing mixes:

node  GPUs  $/hour  pool owner  scenario
mig1  1     10.00   mteam       A100 split 3g.40gb (pod serve-a) + 2g.20gb (pod debug-b) + 2g.20gb (no pod)
ts1   1     10.00   tteam       GPU time-sliced: Run:ai reservation pod + frac-a (0.5, all day) + frac-b
                                (0.5, 00–12) + frac-c (0.5, 06–07: over the GPU, left out)
h8    8     56.00   steam       Slurm job 9001 on two 3g.40gb instances (gres/gpu:3g.40gb=2), job 9002 on
                                one whole GPU 00–12
tsd   1      8.00   dteam       GPU time-sliced into 4 replicas by the NVIDIA device plugin
                                (kubernetes.gpu_replicas): slice-a (nvidia.com/gpu: 1, all day) + slice-b
                                (nvidia.com/gpu.shared: 2, 00–12)
sh1   1      4.00   hteam       Slurm shards, 4 to a GPU (clusters.c2.gpu_shards): job 9101 two shards all
                                day, job 9102 one shard 00–12
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import ROUND_HALF_EVEN
from decimal import Decimal as D

import pytest

from tests.e2e.test_ledger_scenarios import _run, cost_table, day_totals, job_rows
from tests.support.scenario_builder import Landing, Series, utc

NOV2 = date(2026, 11, 2)
A100 = "NVIDIA A100-SXM4-80GB"
DAY_S = 86400
ALL_DAY = [(utc(2026, 11, 2), utc(2026, 11, 3))]


def _except(a: datetime, b: datetime) -> list[tuple[datetime, datetime]]:
    return [(utc(2026, 11, 2), a), (b, utc(2026, 11, 3))]


def build(root) -> Landing:
    L = Landing(root)
    L.config = {"teams": {"serving": {"projects": ["inf-m", "inf-t", "inf-s", "inf-d", "inf-h"]},
                          "debugging": {"projects": ["dbg-m", "dbg-t", "dbg-s", "dbg-d", "dbg-h"]}},
                "slurm_accounts": {"acct-inf": "inf-s", "acct-dbg": "dbg-s", "acct-inf-h": "inf-h", "acct-dbg-h": "dbg-h"},
                "kubernetes": {"gpu_replicas": {"tsd": 4}},
                "clusters": {"c2": {"gpu_shards": 4}}}
    start, end = utc(2026, 11, 2), utc(2026, 11, 3)

    # --- A: an A100 in MIG mode: 3g.40gb + 2g.20gb + 2g.20gb, the last one unused ---------------
    L.node("mig1", cluster="k1", gpu_model=A100, gpu_count=1, pool="pool-m", team="mteam")
    L.node_hours("mig1", start, 24, D("10.00"))
    L.pod("k1", "serving", "serve-a", node="mig1", start=start, end=end,
          resources={"nvidia.com/mig-3g.40gb": "1"}, labels={"project": "inf-m"})
    L.pod("k1", "debug", "debug-b", node="mig1", start=start, end=end,
          resources={"nvidia.com/mig-2g.20gb": "1"}, labels={"project": "dbg-m"})
    # each instance has its own series (GPU_I_ID); debug-b's instance idles 02:00–03:00, the unused one all day
    L.series("mig1", NOV2, [Series(0, "1", "serving/serve-a", ALL_DAY),
                            Series(0, "2", "debug/debug-b", _except(utc(2026, 11, 2, 2), utc(2026, 11, 2, 3))),
                            Series(0, "3", None, [])])

    # --- B: one GPU time-sliced by Run:ai fractions ---------------------------------------------
    L.node("ts1", cluster="k1", gpu_count=1, pool="pool-t", team="tteam")
    L.node_hours("ts1", start, 24, D("10.00"))
    L.pod("k1", "runai-reservation", "runai-reservation-gpu-ts1-x7", node="ts1", start=start, end=end,
          resources={"nvidia.com/gpu": "1"}, labels={"app": "runai-reservation"})
    L.pod("k1", "serving", "frac-a", node="ts1", start=start, end=end,
          annotations={"gpu-fraction": "0.5", "runai-gpu": "0"}, labels={"project": "inf-t"})
    L.pod("k1", "debug", "frac-b", node="ts1", start=start, end=utc(2026, 11, 2, 12),
          annotations={"gpu-fraction": "0.5", "runai-gpu": "0"}, labels={"project": "dbg-t"})
    L.pod("k1", "debug", "frac-c", node="ts1", start=utc(2026, 11, 2, 6), end=utc(2026, 11, 2, 7),
          annotations={"gpu-fraction": "0.5", "runai-gpu": "0"}, labels={"project": "dbg-t"})
    # the exporter names the reservation pod, which holds the GPU: the sharing pods are judged by the GPU
    L.series("ts1", NOV2, [Series(0, None, "runai-reservation/runai-reservation-gpu-ts1-x7", ALL_DAY)])

    # --- C: Slurm MIG GRES ----------------------------------------------------------------------
    L.node("h8", cluster="c1", gpu_count=8, pool="pool-s", team="steam")
    L.node_hours("h8", start, 24, D("56.00"))
    L.job("c1", "9001", account="acct-inf", start="2026-11-02T00:00:00", end="2026-11-03T00:00:00",
          state="COMPLETED", host="h8", tres="cpu=8,gres/gpu=2,gres/gpu:3g.40gb=2,node=1")
    L.job("c1", "9002", account="acct-dbg", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00",
          state="COMPLETED", host="h8", tres="cpu=8,gres/gpu=1,gres/gpu:h100=1,node=1")
    L.series("h8", NOV2, [Series(0, "1", "9001", ALL_DAY),
                          Series(0, "2", "9001", _except(utc(2026, 11, 2, 10), utc(2026, 11, 2, 12))),
                          Series(1, None, "9002", [(start, utc(2026, 11, 2, 12))])])

    # --- D: one GPU time-sliced into 4 replicas by the device plugin --------------------------------
    L.node("tsd", cluster="k1", gpu_count=1, pool="pool-d", team="dteam")
    L.node_hours("tsd", start, 24, D("8.00"))
    L.pod("k1", "serving", "slice-a", node="tsd", start=start, end=end,
          resources={"nvidia.com/gpu": "1"}, labels={"project": "inf-d"})
    L.pod("k1", "debug", "slice-b", node="tsd", start=start, end=utc(2026, 11, 2, 12),
          resources={"nvidia.com/gpu.shared": "2"}, labels={"project": "dbg-d"})
    # time-sliced pods share one device: the exporter names no pod, the GPU is busy all day
    L.series("tsd", NOV2, [Series(0, None, None, ALL_DAY)])

    # --- E: Slurm's own sharing GRES: shards ----------------------------------------------------------
    L.node("sh1", cluster="c2", gpu_count=1, pool="pool-h", team="hteam")
    L.node_hours("sh1", start, 24, D("4.00"))
    L.job("c2", "9101", account="acct-inf-h", start="2026-11-02T00:00:00", end="2026-11-03T00:00:00",
          state="COMPLETED", host="sh1", tres="cpu=8,gres/shard=2,node=1")
    L.job("c2", "9102", account="acct-dbg-h", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00",
          state="COMPLETED", host="sh1", tres="cpu=8,gres/shard=1,node=1")
    L.series("sh1", NOV2, [Series(0, None, None, ALL_DAY)])
    return L


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    led = _run(build(tmp_path_factory.mktemp("fractional")), [NOV2])
    yield led
    led.con.close()


# --- A on paper ------------------------------------------------------------------------------------
# Each hour's $10.00 is 10·10^18 units split 3 : 2 : 2 (the instances' compute slices of 7). Floors:
# 3g: (30·10^18 − 2)/7 = 4285714285714285714 (remainder 2/7); each 2g: (20·10^18 − 6)/7 =
# 2857142857142857142 (remainder 6/7). They sum to 10·10^18 − 2, so the 2 units left go to the two
# largest remainders, the 2g pieces: 2.857142857142857143 each. The unused 2g.20gb is idle_unallocated.
assert 3 * 10**19 % 7 == 2 and 2 * 10**19 % 7 == 6
HOUR_3G, HOUR_2G = D("4.285714285714285714"), D("2.857142857142857143")
assert HOUR_3G + 2 * HOUR_2G == D("10.00")


def _close(got: float, want: float) -> bool:
    """GPU-seconds are stored rounded to 1/65536 s an hourly row (docs/ledger.md#fractional-gpus): within a
    millisecond over a day."""
    return abs(got - want) < 1e-3


def test_a_mig_gpu_splits_by_compute_slices_and_its_unused_slice_is_idle(ledger):
    cost = cost_table(ledger, NOV2)
    serve = cost[("serving", "inf-m", "productive")]
    debug_busy, debug_idle = cost[("debugging", "dbg-m", "productive")], cost[("debugging", "dbg-m", "allocated_idle")]
    idle = cost[("mteam", None, "idle_unallocated")]
    assert serve[0] == 24 * HOUR_3G == D("102.857142857142857136")
    assert debug_busy[0] == 23 * HOUR_2G and debug_idle[0] == HOUR_2G     # its own instance idled 02:00–03:00
    assert idle[0] == 24 * HOUR_2G == D("68.571428571428571432")
    assert serve[0] + debug_busy[0] + debug_idle[0] + idle[0] == D("240.00")
    # to the cent (half-even): 102.86 + 68.57 + 68.57 — the slices of the GPU are 3/7, 2/7 and 2/7 of it
    cents = [x.quantize(D("0.01"), ROUND_HALF_EVEN) for x in (serve[0], debug_busy[0] + debug_idle[0], idle[0])]
    assert cents == [D("102.86"), D("68.57"), D("68.57")]
    assert _close(serve[2], 3 / 7 * DAY_S)
    assert _close(debug_busy[2], 2 / 7 * 23 * 3600) and _close(debug_idle[2], 2 / 7 * 3600)
    assert _close(idle[2], 2 / 7 * DAY_S)


def test_a_gpu_time_sliced_at_half_each_splits_in_halves(ledger):
    cost = cost_table(ledger, NOV2)
    # $10.00 an hour, 0.5 each: $5.00 an hour to each pod that holds its half; 12 hours of half a GPU idle
    assert cost[("serving", "inf-t", "productive")][0] == D("120.00")
    assert cost[("debugging", "dbg-t", "productive")][0] == D("60.00")
    assert cost[("tteam", None, "idle_unallocated")][0] == D("60.00")
    assert _close(cost[("serving", "inf-t", "productive")][2], 0.5 * DAY_S)
    assert _close(cost[("tteam", None, "idle_unallocated")][2], 0.5 * 12 * 3600)
    # the reservation pod is no consumer; frac-c asked for a third half of a whole GPU: left out, named
    jobs = job_rows(ledger)
    assert not any(job_id.startswith("runai-reservation/") for job_id, _ in jobs)
    reasons = [r for (r,) in ledger.rows("SELECT reason FROM ops.quarantine WHERE payload LIKE '%frac-c%'")]
    assert reasons == ["claims GPUs of ts1 already held: 0.5 GPU(s) at 2026-11-02T06:00:00Z while 1 of its 1 are "
                       "held by job(s) debug/frac-b, serving/frac-a; left out of the ledger"]


def test_a_gpu_time_sliced_into_replicas_splits_by_replica(ledger):
    cost = cost_table(ledger, NOV2)
    # $8.00 an hour, a replica is a quarter: slice-a $2.00 an hour all day, slice-b two replicas ($4.00 an
    # hour) 00–12; unheld: a quarter of the GPU 00–12 ($2.00 × 12) and three quarters 12–24 ($6.00 × 12)
    assert cost[("serving", "inf-d", "productive")][0] == D("48.00")
    assert cost[("debugging", "dbg-d", "productive")][0] == D("48.00")
    assert cost[("dteam", None, "idle_unallocated")][0] == D("96.00")
    assert _close(cost[("serving", "inf-d", "productive")][2], 0.25 * DAY_S)
    assert _close(cost[("debugging", "dbg-d", "productive")][2], 0.5 * 12 * 3600)


def test_slurm_shards_split_a_gpu_by_the_clusters_shard_count(ledger):
    cost = cost_table(ledger, NOV2)
    # $4.00 an hour, a shard is a quarter: 9101 (two shards) $2.00 an hour all day, 9102 $1.00 an hour
    # 00–12; unheld: a quarter 00–12 ($1.00 × 12) and half 12–24 ($2.00 × 12)
    assert cost[("serving", "inf-h", "productive")][0] == D("48.00")
    assert cost[("debugging", "dbg-h", "productive")][0] == D("12.00")
    jobs = job_rows(ledger)
    assert jobs[("9101", NOV2)]["effective_cost"] == D("48.00") and jobs[("9102", NOV2)]["effective_cost"] == D("12.00")
    assert _close(jobs[("9101", NOV2)]["gpu_seconds"], 0.5 * DAY_S)
    assert cost[("hteam", None, "idle_unallocated")][0] == D("36.00")


def test_a_slurm_mig_gres_job_holds_its_instances_share(ledger):
    cost = cost_table(ledger, NOV2)
    # $56 an hour for 8 GPUs is $7 a GPU-hour, $3 an hour for a 3g.40gb instance (3/7 of a GPU)
    assert cost[("serving", "inf-s", "productive")][0] == 24 * 3 + 22 * 3 == 138
    assert cost[("serving", "inf-s", "allocated_idle")][0] == 2 * 3          # instance 2 idled 10:00–12:00
    assert cost[("debugging", "dbg-s", "productive")][0] == 12 * 7
    assert cost[("steam", None, "idle_unallocated")][0] == 24 * 56 - 144 - 84
    assert _close(cost[("serving", "inf-s", "allocated_idle")][2], 3 / 7 * 2 * 3600)
    assert _close(cost[("serving", "inf-s", "productive")][2], 3 / 7 * (DAY_S + 22 * 3600))
    job = job_rows(ledger)[("9001", NOV2)]
    assert job["gpus"] == 0 and _close(job["gpu_seconds"], 6 / 7 * DAY_S) and job["effective_cost"] == 144


def test_the_day_is_conserved_exactly(ledger):
    assert day_totals(ledger) == {NOV2: (D("2112.00"), D("2112.00"))}    # 240 + 240 + 1344 + 192 + 96
    with_seconds = ledger.rows("SELECT sum(gpu_seconds) FROM marts.fct_cost_daily WHERE day = ?", [NOV2])[0][0]
    assert _close(with_seconds, (1 + 1 + 8 + 1 + 1) * DAY_S)   # every billed GPU-second in one category
