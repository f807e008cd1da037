"""Hand-computed ledger scenarios (docs/landing.md, docs/ledger.md, docs/tables.md).

Every expected number below is worked out on paper from the rules in docs/ledger.md and the landing
files these tests write (tests/support/scenario_builder.py) — never from the pipeline's SQL. Prices are round so the arithmetic is
clean: a GPU node at $36.00 an hour is $0.00125 per GPU-second for its 8 GPUs.

To keep the file well under a minute, the scenarios that place money without spreading it (1–6: node
hours and one tagged storage line) share one landing zone on distinct nodes, projects and teams, run for
2026-11-01..04; the two that spread money over projects by their cost (7: tax/credit, 8: commitment
purchase) each get a landing zone of their own, so nothing else sways their proportions.

GPU-seconds are asserted exactly: every job boundary, idle stretch and bill hour lies on a whole minute,
so the per-minute rollup of the 30-s telemetry loses nothing (a tolerance would only be needed for
boundaries inside a minute, which these scenarios avoid on purpose).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal as D
from pathlib import Path

import duckdb
import pytest

from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

NOV1, NOV2, NOV3, NOV4 = date(2026, 11, 1), date(2026, 11, 2), date(2026, 11, 3), date(2026, 11, 4)
HOUR = 3600
GPUS = 8
PRICE = D("36.00")            # per node-hour: $0.00125 per GPU-second
PER_GPU_S = PRICE / (GPUS * HOUR)
assert PER_GPU_S == D("0.00125")

RUN_MODEL = {"params": 6.7e9, "active_params": 6.7e9, "layers": 32, "heads": 32, "head_dim": 128, "seq_len": 4096}
H100_BF16_PEAK = 989e12        # docs/ledger.md#efficiency-metrics (H100 SXM, bf16)


@dataclass
class Ledger:
    landing: Landing
    days: list[date]
    con: duckdb.DuckDBPyConnection

    def rows(self, sql: str, params: list | None = None) -> list[tuple]:
        return self.con.execute(sql, params or []).fetchall()


def _run(landing: Landing, days: list[date]):
    landing.write()
    failed = run_pipeline(landing.landing, landing.warehouse, landing.config_path, days)
    assert not failed, failed
    con = duckdb.connect(str(landing.warehouse), read_only=True)
    return Ledger(landing, days, con)


def cost_table(ledger: Ledger, day: date, *, ignore_project_of: tuple[str, ...] = ("idle_unallocated",)):
    """fct_cost_daily of a day as {(team, project, category): (effective, billed, gpu_seconds)}; the project
    of `idle_unallocated` rows is not part of the contract (docs/ledger.md#categories names only the team), so it is
    folded to None."""
    out: dict[tuple, list] = defaultdict(lambda: [D(0), D(0), 0.0])
    for team, project, category, e, b, s in ledger.rows(
            "SELECT team, project, category, effective_cost, billed_cost, gpu_seconds FROM marts.fct_cost_daily "
            "WHERE day = ?", [day]):
        key = (team, None if category in ignore_project_of else project, category)
        out[key][0] += e
        out[key][1] += b
        out[key][2] += s or 0.0
    # a cell that carries neither money nor GPU-seconds says nothing: zero rows are not compared
    return {k: tuple(v) for k, v in out.items() if v != [0, 0, 0.0]}


def day_totals(ledger: Ledger) -> dict[date, tuple[D, D]]:
    return {d: (e, b) for d, e, b in ledger.rows(
        "SELECT day, sum(effective_cost), sum(billed_cost) FROM marts.fct_cost_daily GROUP BY day")}


def job_rows(ledger: Ledger) -> dict[tuple[str, date], dict]:
    cols = ["day", "job_id", "cluster", "run_id", "team", "project", "user_name", "state", "start_ts", "end_ts",
            "gpus", "gpu_seconds", "effective_cost", "productive_gpu_seconds", "rerun_loss_gpu_seconds",
            "allocated_idle_gpu_seconds", "failed_job_gpu_seconds", "unmonitored_gpu_seconds"]
    return {(r[1], r[0]): dict(zip(cols, r)) for r in ledger.rows(f"SELECT {', '.join(cols)} FROM marts.fct_job_cost")}


def assert_job(row: dict, **want) -> None:
    got = {k: row[k] for k in want}
    assert got == want, (row["job_id"], row["day"])


# =====================================================================================================
# Scenarios 1–6: one landing zone, Nov 1–4 2026
# =====================================================================================================
#
# node  cluster pool    pool owner              scenario
# n1    c1      pool-a  infra (inventory)       1 interruption + resume, run r1 (project p1 → team ml)
# n2    c1      pool-b  ops (inventory)         2 hung job 2001 (project p2 → team research)
# n3    c1      pool-c  platform (inventory)    3 job 3001 00–12 (project p3 → team vision)
# n4    c1      pool-x  none                    3 job 3002 00–12 (project p3): idle → _unallocated
# n5    c1      pool-d  batch (config pools)    4 job 4001 across midnight (project p4, no team → team p4)
# w1    west    pool-w  infra (inventory)       5 job 5001 across the LA fall-back (project p5 → team p5)
# (no node)                                     6 storage line of project p1 over Nov 2–5
#
# Bills: n1–n4 24 × $36 on Nov 2; n5 24 × $36 on Nov 2 and 24 × $72 on Nov 3; w1 24 × $36 on Nov 1.

STORAGE_LINE = D("30.000000000000000001")
# Scenario 6 on paper. The line covers 72 whole hours, equal weights; in units of 1e-18 it is
# 30·10^18 + 1 = 72 · 416666666666666666 + 49. Each hour gets the floor 416666666666666666 and all 72
# remainders are equal, so the 49 leftover units go one each to the 49 earliest hours (ties → earlier
# hour): hours 0–48, i.e. all 24 hours of Nov 2, all 24 of Nov 3 and the first hour of Nov 4.
#   Nov 2: 24·416666666666666666 + 24 = 10.000000000000000008
#   Nov 3: 24·416666666666666666 + 24 = 10.000000000000000008
#   Nov 4: 24·416666666666666666 +  1 =  9.999999999999999985
# (A day-level split would give 10, 10, 10 + 1e-18; the hourly cut by time + largest remainder of
# docs/ledger.md#how-a-bill-line-is-split gives the figures above, which still sum exactly to the line.)
STORAGE_BY_DAY = {NOV2: D("10.000000000000000008"), NOV3: D("10.000000000000000008"),
                  NOV4: D("9.999999999999999985")}
assert sum(STORAGE_BY_DAY.values()) == STORAGE_LINE
assert 72 * 416666666666666666 + 49 == 30 * 10**18 + 1


def build_fleet(root: Path) -> Landing:
    L = Landing(root)
    L.config = {
        "teams": {"ml": {"projects": ["p1"]}, "research": {"projects": ["p2"]}, "vision": {"projects": ["p3"]}},
        "slurm_accounts": {"acct1": "p1", "acct2": "p2", "acct3": "p3"},   # accounts p4/p5: unknown → project = account
        "clusters": {"c1": {"timezone": "UTC"}, "west": {"timezone": "America/Los_Angeles"}},
        "pools": {"pool-d": "batch"},
    }
    L.node("n1", pool="pool-a", team="infra")
    L.node("n2", pool="pool-b", team="ops")
    L.node("n3", pool="pool-c", team="platform")
    L.node("n4", pool="pool-x", team="")
    L.node("n5", pool="pool-d", team="")
    L.node("w1", cluster="west", pool="pool-w", team="infra")
    for host in ("n1", "n2", "n3", "n4", "n5"):
        L.node_hours(host, utc(2026, 11, 2), 24, PRICE)
    L.node_hours("n5", utc(2026, 11, 3), 24, 2 * PRICE)
    L.node_hours("w1", utc(2026, 11, 1), 24, PRICE)

    # --- scenario 1: run r1 on n1 ---------------------------------------------------------------
    L.job("c1", "1001", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T06:00:00",
          state="NODE_FAIL", host="n1", comment="run_id=r1")
    L.job("c1", "1002", account="acct1", start="2026-11-02T06:30:00", end="2026-11-02T12:00:00",
          state="COMPLETED", host="n1", comment="run_id=r1")
    L.telemetry("n1", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 6), "1001", True),
                               Activity(utc(2026, 11, 2, 6, 30), utc(2026, 11, 2, 12), "1002", True)])
    L.event("r1", "run_config", utc(2026, 11, 2, 0, 1), job_id="1001", project="p1", model=RUN_MODEL, dtype="bf16")
    for h in range(1, 6):   # steps 100..500 at 01:00..05:00, 100 000 tokens each
        L.event("r1", "step", utc(2026, 11, 2, h), job_id="1001", step=100 * h, tokens=100_000)
    L.event("r1", "checkpoint_saved", utc(2026, 11, 2, 5), job_id="1001", step=500)
    L.event("r1", "step", utc(2026, 11, 2, 5, 30), job_id="1001", step=550, tokens=50_000)    # rolled back
    L.event("r1", "checkpoint_loaded", utc(2026, 11, 2, 6, 40), job_id="1002", step=500)
    L.event("r1", "step", utc(2026, 11, 2, 6, 45), job_id="1002", step=510, tokens=10_000)   # first after restore
    L.event("r1", "step", utc(2026, 11, 2, 8), job_id="1002", step=600, tokens=90_000)
    L.event("r1", "step", utc(2026, 11, 2, 10), job_id="1002", step=700, tokens=100_000)
    L.event("r1", "step", utc(2026, 11, 2, 11), job_id="1002", step=800, tokens=100_000)

    # --- scenario 2: hung job on n2 -------------------------------------------------------------
    L.job("c1", "2001", account="acct2", start="2026-11-02T02:00:00", end="2026-11-02T10:00:00",
          state="TIMEOUT", host="n2", exit_code="0:1")
    L.telemetry("n2", [NOV2], [Activity(utc(2026, 11, 2, 2), utc(2026, 11, 2, 10), "2001", False)])

    # --- scenario 3: half-idle nodes n3 (owned pool) and n4 (pool without owner) -----------------
    for job, host in (("3001", "n3"), ("3002", "n4")):
        L.job("c1", job, account="acct3", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00",
              state="COMPLETED", host=host)
        L.telemetry(host, [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 12), job, True)])

    # --- scenario 4: across midnight on n5 ------------------------------------------------------
    L.job("c1", "4001", account="p4", start="2026-11-02T20:00:00", end="2026-11-03T04:00:00",
          state="COMPLETED", host="n5")
    L.telemetry("n5", [NOV2, NOV3], [Activity(utc(2026, 11, 2, 20), utc(2026, 11, 3, 4), "4001", True)])

    # --- scenario 5: LA fall-back on w1: 00:30 PDT (07:30Z) → 03:30 PST (11:30Z) = 4 real hours ----
    L.job("west", "5001", account="p5", start="2026-11-01T00:30:00", end="2026-11-01T03:30:00",
          state="COMPLETED", host="w1")
    L.telemetry("w1", [NOV1], [Activity(utc(2026, 11, 1, 7, 30), utc(2026, 11, 1, 11, 30), "5001", True)])

    # --- scenario 6: a 3-day storage line of project p1 ---------------------------------------------
    L.line(utc(2026, 11, 2), utc(2026, 11, 5), "Usage", STORAGE_LINE, resource_id="vol-archive-1",
           resource_type="volume", service="Storage", tags={"project": "p1"})
    return L


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    ledger = _run(build_fleet(tmp_path_factory.mktemp("fleet")), [NOV1, NOV2, NOV3, NOV4])
    yield ledger
    ledger.con.close()


def s(hours: float, gpus: int = GPUS) -> float:
    """GPU-seconds of `gpus` GPUs for `hours`."""
    return gpus * hours * HOUR


def usd(gpu_seconds: float, per_gpu_s: D = PER_GPU_S) -> D:
    return D(int(gpu_seconds)) * per_gpu_s


# Expected fct_cost_daily, by day: (team, project, category) → (effective, billed, gpu_seconds).
# Everything here is on-demand: BilledCost = EffectiveCost line by line.
def _e(eff: D, gs: float = 0.0) -> tuple[D, D, float]:
    return (eff, eff, gs)


FLEET_COST = {
    NOV1: {
        # w1: job 5001 07:30–11:30Z (4 h) productive, the other 20 h idle for pool-w's owner infra
        ("p5", "p5", "productive"): _e(usd(s(4)), s(4)),                       # 144.00
        ("infra", None, "idle_unallocated"): _e(usd(s(20)), s(20)),            # 720.00
    },
    NOV2: {
        # n1 (scenario 1): productive 00–05 and 06:45–12 (5 h + 5.25 h), rerun_loss 05–06 lost and
        # 06:30–06:45 restart, idle_unallocated 06:00–06:30 and 12–24 (12.5 h)
        ("ml", "p1", "productive"): _e(usd(s(10.25)), s(10.25)),               # 369.00
        ("ml", "p1", "rerun_loss"): _e(usd(s(1.25)), s(1.25)),                 # 45.00
        ("infra", None, "idle_unallocated"): _e(usd(s(12.5)), s(12.5)),        # 450.00
        # n2 (scenario 2): 8 h allocated_idle (idle beats failed_job), 16 h idle for ops
        ("research", "p2", "allocated_idle"): _e(usd(s(8)), s(8)),             # 288.00
        ("ops", None, "idle_unallocated"): _e(usd(s(16)), s(16)),              # 576.00
        # n3 + n4 (scenario 3): 12 h productive each; 12 h idle each, to platform / _unallocated
        ("vision", "p3", "productive"): _e(usd(s(24)), s(24)),                 # 864.00
        ("platform", None, "idle_unallocated"): _e(usd(s(12)), s(12)),        # 432.00
        ("_unallocated", None, "idle_unallocated"): _e(usd(s(12)), s(12)),    # 432.00
        # n5 (scenario 4): 20:00–24:00 productive for p4 (no team configured → team = project),
        # 00–20 idle for pool-d's owner from config (batch)
        ("p4", "p4", "productive"): _e(usd(s(4)), s(4)),                       # 144.00
        ("batch", None, "idle_unallocated"): _e(usd(s(20)), s(20)),            # 720.00
        # storage line (scenario 6)
        ("ml", "p1", "storage"): _e(STORAGE_BY_DAY[NOV2]),
    },
    NOV3: {
        # n5 at $72/h: 00–04 productive, 04–24 idle
        ("p4", "p4", "productive"): _e(usd(s(4), 2 * PER_GPU_S), s(4)),        # 288.00
        ("batch", None, "idle_unallocated"): _e(usd(s(20), 2 * PER_GPU_S), s(20)),  # 1440.00
        ("ml", "p1", "storage"): _e(STORAGE_BY_DAY[NOV3]),
    },
    NOV4: {
        ("ml", "p1", "storage"): _e(STORAGE_BY_DAY[NOV4]),
    },
}
# The days' bills on paper: 24 node-hours per billed node-day plus the storage line's day share.
FLEET_BILL = {
    NOV1: 24 * PRICE,                                            # 864
    NOV2: 5 * 24 * PRICE + STORAGE_BY_DAY[NOV2],                 # 4320.000000000000000008
    NOV3: 24 * 2 * PRICE + STORAGE_BY_DAY[NOV3],                 # 1738.000000000000000008
    NOV4: STORAGE_BY_DAY[NOV4],                                  # 9.999999999999999985
}
for _day, _cells in FLEET_COST.items():   # the expectation itself conserves the bill
    assert sum(c[0] for c in _cells.values()) == FLEET_BILL[_day], _day


def test_fleet_input_is_clean(fleet):
    assert fleet.rows("SELECT source, file, row_ref, reason FROM ops.quarantine") == []


def test_fleet_jobs_and_their_days(fleet):
    # one fct_job_cost row per job and UTC day it held GPUs (docs/ledger.md#days-are-utc: a job crossing midnight is split)
    assert set(job_rows(fleet)) == {("1001", NOV2), ("1002", NOV2), ("2001", NOV2), ("3001", NOV2),
                                    ("3002", NOV2), ("4001", NOV2), ("4001", NOV3), ("5001", NOV1)}


def test_fleet_every_day_sums_exactly_to_the_bill(fleet):
    # docs/ledger.md#conservation: per day Σ effective_cost = the day's share of the bill, same for billed_cost
    got = day_totals(fleet)
    for day, bill in FLEET_BILL.items():
        assert got.get(day) == (bill, bill), day


@pytest.mark.parametrize("day", [NOV1, NOV2, NOV3, NOV4])
def test_fleet_cost_daily_cells(fleet, day):
    assert cost_table(fleet, day) == FLEET_COST[day]


# --- scenario 1 --------------------------------------------------------------------------------------

def test_s1_interrupted_and_resumed_jobs(fleet):
    jobs = job_rows(fleet)
    # job A 00:00–06:00 = 48 GPU-hours: 00–05 productive, 05–06 rerun_loss (after the 05:00 checkpoint);
    # not failed_job: a later job of its run resumed it.
    assert_job(jobs[("1001", NOV2)], run_id="r1", team="ml", project="p1", state="NODE_FAIL", gpus=8,
               gpu_seconds=s(6), effective_cost=usd(s(6)), productive_gpu_seconds=s(5),
               rerun_loss_gpu_seconds=s(1), allocated_idle_gpu_seconds=0.0, failed_job_gpu_seconds=0.0,
               unmonitored_gpu_seconds=0.0)
    # job B 06:30–12:00: 06:30–06:45 (first step after the restore) rerun_loss, the rest productive
    assert_job(jobs[("1002", NOV2)], run_id="r1", team="ml", project="p1", state="COMPLETED", gpus=8,
               gpu_seconds=s(5.5), effective_cost=usd(s(5.5)), productive_gpu_seconds=s(5.25),
               rerun_loss_gpu_seconds=s(0.25), allocated_idle_gpu_seconds=0.0, failed_job_gpu_seconds=0.0,
               unmonitored_gpu_seconds=0.0)
    assert usd(s(6)) == D("216") and usd(s(5.5)) == D("198")


def test_s1_rerun_loss_row(fleet):
    rows = fleet.rows("""SELECT run_id, job_id, interrupted_at, last_checkpoint_at, lost_gpu_seconds,
                                restart_gpu_seconds, effective_cost, cause
                         FROM marts.fct_rerun_loss WHERE day = ?""", [NOV2])
    assert len(rows) == 1
    run_id, job_id, interrupted_at, last_ckpt, lost, restart, cost, cause = rows[0]
    assert (run_id, job_id) == ("r1", "1001")
    assert interrupted_at == datetime(2026, 11, 2, 6, 0)
    assert last_ckpt == datetime(2026, 11, 2, 5, 0)
    assert lost == 8 * 3600          # 05:00–06:00 on 8 GPUs
    assert restart == 8 * 900        # 06:30–06:45 on 8 GPUs
    assert cost == D("45")           # (28 800 + 7 200) · 0.00125
    assert "NODE_FAIL" in cause


def test_s1_run_efficiency(fleet):
    rows = fleet.rows("""SELECT team, project, gpu_model, gpu_seconds, tokens, tokens_kept, mfu, effective_mfu,
                                goodput, effective_cost, cost_per_mtok, mfu_adjusted_cost_per_mtok, mfu_gap_cost
                         FROM marts.fct_run_efficiency_daily WHERE day = ? AND run_id = 'r1'""", [NOV2])
    assert len(rows) == 1
    team, project, gpu_model, gpu_s, tokens, kept, mfu, eff_mfu, goodput, cost, cpm, adj, gap = rows[0]
    assert (team, project) == ("ml", "p1")
    assert "H100" in gpu_model
    all_s, productive_s = s(6) + s(5.5), s(10.25)                 # 331 200 and 295 200
    assert gpu_s == all_s
    assert tokens == 5 * 100_000 + 50_000 + 10_000 + 90_000 + 2 * 100_000    # 850 000
    assert kept == tokens - 50_000        # step 550 (after the 05:00 checkpoint at step 500) rolled back
    assert cost == D("414")               # node cost of both jobs: 216 + 198
    assert goodput == pytest.approx(productive_s / all_s, rel=1e-12)
    # docs/ledger.md#efficiency-metrics formulas with the run_config shape (PaLM attention by default)
    fpt = 6 * 6.7e9 + 12 * 32 * 32 * 128 * 4096                    # 46 642 450 944
    assert mfu == pytest.approx(kept * fpt / (productive_s * H100_BF16_PEAK), rel=1e-9)
    assert eff_mfu == pytest.approx(kept * fpt / (all_s * H100_BF16_PEAK), rel=1e-9)
    # ratios (not ledger amounts): compared to 1e-9 relative
    assert float(cpm) == pytest.approx(414 / 800_000 * 1e6, rel=1e-9)                # 517.5
    assert float(adj) == pytest.approx(414 / all_s * fpt / (H100_BF16_PEAK * 0.40) * 1e6, rel=1e-9)
    assert float(gap) == pytest.approx(414 * (1 - eff_mfu / 0.40), rel=1e-9)


# --- scenario 2 --------------------------------------------------------------------------------------

def test_s2_hung_job_is_allocated_idle_not_failed(fleet):
    jobs = job_rows(fleet)
    # 8 GPUs × 8 h at util 0: allocated_idle outranks failed_job (docs/ledger.md#categories precedence)
    assert_job(jobs[("2001", NOV2)], team="research", project="p2", state="TIMEOUT", gpus=8,
               gpu_seconds=s(8), effective_cost=D("288"), allocated_idle_gpu_seconds=s(8),
               failed_job_gpu_seconds=0.0, productive_gpu_seconds=0.0, rerun_loss_gpu_seconds=0.0,
               unmonitored_gpu_seconds=0.0)


def test_idle_waste_daily(fleet):
    got = {(d, t, h): (iu, ai, e) for d, t, h, iu, ai, e in fleet.rows(
        """SELECT day, team, hostname, idle_unallocated_gpu_seconds, allocated_idle_gpu_seconds, effective_cost
           FROM marts.fct_idle_waste_daily""")}
    want = {
        (NOV1, "infra", "w1"): (s(20), 0.0, D("720")),
        (NOV2, "infra", "n1"): (s(12.5), 0.0, D("450")),
        (NOV2, "ops", "n2"): (s(16), 0.0, D("576")),          # scenario 2: the pool's idle hours
        (NOV2, "research", "n2"): (0.0, s(8), D("288")),      # scenario 2: the hung job, to its team
        (NOV2, "platform", "n3"): (s(12), 0.0, D("432")),     # scenario 3: owned pool
        (NOV2, "_unallocated", "n4"): (s(12), 0.0, D("432")),  # scenario 3: pool without an owner
        (NOV2, "batch", "n5"): (s(20), 0.0, D("720")),
        (NOV3, "batch", "n5"): (s(20), 0.0, D("1440")),
    }
    assert got == want


# --- scenario 3 --------------------------------------------------------------------------------------

def test_s3_half_idle_nodes(fleet):
    jobs = job_rows(fleet)
    for job in ("3001", "3002"):
        assert_job(jobs[(job, NOV2)], team="vision", project="p3", gpu_seconds=s(12), effective_cost=D("432"),
                   productive_gpu_seconds=s(12))
    cells = cost_table(fleet, NOV2)
    assert cells[("platform", None, "idle_unallocated")] == (D("432"), D("432"), 345_600.0)
    assert cells[("_unallocated", None, "idle_unallocated")] == (D("432"), D("432"), 345_600.0)


# --- scenario 4 --------------------------------------------------------------------------------------

def test_s4_job_across_midnight_has_a_row_per_day(fleet):
    jobs = job_rows(fleet)
    assert {d for (j, d) in jobs if j == "4001"} == {NOV2, NOV3}
    # 20:00–24:00 on Nov 2 at $36/h, 00:00–04:00 on Nov 3 at $72/h: each day's cost is its own node-hours'
    assert_job(jobs[("4001", NOV2)], team="p4", project="p4", gpu_seconds=s(4), effective_cost=D("144"),
               productive_gpu_seconds=s(4))
    assert_job(jobs[("4001", NOV3)], team="p4", project="p4", gpu_seconds=s(4), effective_cost=D("288"),
               productive_gpu_seconds=s(4))
    assert jobs[("4001", NOV2)]["start_ts"] == datetime(2026, 11, 2, 20)
    assert jobs[("4001", NOV2)]["end_ts"] == datetime(2026, 11, 3, 4)


# --- scenario 5 --------------------------------------------------------------------------------------

def test_s5_job_across_the_dst_fall_back(fleet):
    jobs = job_rows(fleet)
    row = jobs[("5001", NOV1)]
    # 2026-11-01 00:30 PDT (UTC−7) = 07:30Z; 03:30 PST (UTC−8) = 11:30Z: 4 real hours, not 3
    assert row["start_ts"] == datetime(2026, 11, 1, 7, 30)
    assert row["end_ts"] == datetime(2026, 11, 1, 11, 30)
    assert_job(row, cluster="west", team="p5", project="p5", gpu_seconds=s(4), effective_cost=D("144"),
               productive_gpu_seconds=s(4), unmonitored_gpu_seconds=0.0)


# --- scenario 6 --------------------------------------------------------------------------------------

def test_s6_multi_day_storage_line(fleet):
    got = {d: (e, b) for d, e, b in fleet.rows(
        """SELECT day, effective_cost, billed_cost FROM marts.fct_cost_daily
           WHERE category = 'storage' AND project = 'p1' AND team = 'ml'""")}
    assert got == {d: (v, v) for d, v in STORAGE_BY_DAY.items()}
    assert sum(e for e, _ in got.values()) == STORAGE_LINE
    assert sum(b for _, b in got.values()) == STORAGE_LINE


# =====================================================================================================
# Scenario 7: tax and credit spread by pre-tax cost (own landing zone)
# =====================================================================================================
# Node t1 is billed 16 h at $25 (00–16Z) and fully allocated: job 7001 (p1, team ml) 00–12 = $300,
# job 7002 (p2, team research) 12–16 = $100. Untagged Tax $40 and Credit −$20 for the day.
# Pre-tax cost p1 : p2 = 300 : 100 → tax 30 / 10, credit −15 / −5. Bill: 400 + 40 − 20 = 420.

@pytest.fixture(scope="module")
def taxes(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("taxes"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}, "research": {"projects": ["p2"]}},
                "slurm_accounts": {"acct1": "p1", "acct2": "p2"}, "clusters": {"c1": {"timezone": "UTC"}}}
    L.node("t1", pool="pool-t", team="infra")
    L.node_hours("t1", utc(2026, 11, 2), 16, D("25.00"))
    L.job("c1", "7001", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00",
          state="COMPLETED", host="t1")
    L.job("c1", "7002", account="acct2", start="2026-11-02T12:00:00", end="2026-11-02T16:00:00",
          state="COMPLETED", host="t1")
    L.telemetry("t1", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 12), "7001", True),
                               Activity(utc(2026, 11, 2, 12), utc(2026, 11, 2, 16), "7002", True)])
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Tax", D("40.00"), tags=None)
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Credit", D("-20.00"), tags=None)
    ledger = _run(L, [NOV2])
    yield ledger
    ledger.con.close()


def test_s7_tax_and_credit_spread_by_pretax_cost(taxes):
    assert taxes.rows("SELECT source, file, row_ref, reason FROM ops.quarantine") == []
    assert cost_table(taxes, NOV2) == {
        ("ml", "p1", "productive"): _e(D("300"), s(12)),
        ("research", "p2", "productive"): _e(D("100"), s(4)),
        ("ml", "p1", "tax"): _e(D("30")),
        ("research", "p2", "tax"): _e(D("10")),
        ("ml", "p1", "credit"): _e(D("-15")),
        ("research", "p2", "credit"): _e(D("-5")),
    }
    assert day_totals(taxes) == {NOV2: (D("420"), D("420"))}


# =====================================================================================================
# Scenario 8: an unused commitment (own landing zone)
# =====================================================================================================
# Node s1 (pool-r, owned by infra) is covered by savings plan sp-1: 24 hourly Committed/Used lines,
# EffectiveCost 2.50, BilledCost 0. The plan's 24 hourly Unused rows (ResourceId sp-1, untagged):
# EffectiveCost 0.50, BilledCost 0. Its daily Purchase row: BilledCost 72, EffectiveCost 0.
# Job 8001 (p1, team ml) 00–12 busy.
#   productive   p1    12 × 2.50 = 30.00 effective, 0 billed, 8 × 12 h GPU-seconds
#   idle_unalloc infra 12 × 2.50 = 30.00 effective, 0 billed
#   unused_commitment infra 24 × 0.50 = 12.00 effective, 0 billed (sp-1 covered pool-r's node)
#   the Purchase: 0 effective, 72 billed (its category is not pinned by docs/ledger.md; only its total is)
# Bill: effective 60 + 12 + 0 = 72; billed 0 + 0 + 72 = 72.

@pytest.fixture(scope="module")
def commitment(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("commitment"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "clusters": {"c1": {"timezone": "UTC"}}}
    L.node("s1", pool="pool-r", team="infra")
    L.node_hours("s1", utc(2026, 11, 2), 24, D("2.50"), D("0"), pricing="Committed", cd_id="sp-1",
                 cd_status="Used")
    for h in range(24):
        L.line(utc(2026, 11, 2, h), utc(2026, 11, 2, h + 1) if h < 23 else utc(2026, 11, 3), "Usage",
               D("0.50"), D("0"), resource_id="sp-1", resource_type="Savings Plan", service="Compute",
               pricing="Committed", cd_id="sp-1", cd_status="Unused")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Purchase", D("0"), D("72"), resource_id="sp-1",
           resource_type="Savings Plan", service="Compute", cd_id="sp-1")
    L.job("c1", "8001", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00",
          state="COMPLETED", host="s1")
    L.telemetry("s1", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 12), "8001", True)])
    ledger = _run(L, [NOV2])
    yield ledger
    ledger.con.close()


def test_s8_unused_commitment_goes_to_the_pool_owner(commitment):
    assert commitment.rows("SELECT source, file, row_ref, reason FROM ops.quarantine") == []
    cells = cost_table(commitment, NOV2, ignore_project_of=("idle_unallocated", "unused_commitment"))
    assert cells[("ml", "p1", "productive")] == (D("30"), D("0"), s(12))
    assert cells[("infra", None, "idle_unallocated")] == (D("30"), D("0"), s(12))
    assert cells[("infra", None, "unused_commitment")][:2] == (D("12"), D("0"))
    assert not any(k[2] == "unused_commitment" and k[0] != "infra" for k in cells)
    # every other cell carries no effective cost (only the Purchase's billed 72 is left to place)
    rest = {k: v for k, v in cells.items()
            if k not in {("ml", "p1", "productive"), ("infra", None, "idle_unallocated"),
                         ("infra", None, "unused_commitment")}}
    assert sum(v[0] for v in rest.values()) == 0
    assert sum(v[1] for v in rest.values()) == D("72")
    assert day_totals(commitment) == {NOV2: (D("72"), D("72"))}


# --- scenario 9: the badput of a run (docs/ledger.md#the-badput-of-a-run) ------------------------
# Node b1, 8 GPUs at $36.00 an hour ($0.00125 per GPU-second, $3.00 per 5 GPU-minutes of the node) on
# Nov 2, telemetry busy whenever a job runs. Run rb:
#   job 7001 00:00–06:00 NODE_FAIL: first step 00:30 (startup 30 min), blocking saves
#     01:00–01:05, 02:00–02:05, 03:00–03:05 (15 min), the last save completed at 03:05, so 03:05–06:00
#     (175 min) is lost; productive 00:00–03:05 = 185 min = 30 startup + 15 checkpoint + 140 goodput.
#   job 7002 06:30–10:00 COMPLETED: loads the checkpoint, first step 06:45, so 06:30–06:45 (15 min) is
#     restart (no startup: it is restart already); an evaluation 08:15–08:25 (10 min); its step at 07:30
#     took 2700 s (since 06:45) of which 270 s waiting for data (1/10) and 135 s in exposed
#     communication (1/20): hour 07 is productive throughout, so data_wait = 6 min and
#     exposed_communication = 3 min of the node; productive 06:45–10:00 = 195 min = 10 evaluation + 6
#     data + 3 communication + 176 goodput.
# Per node-minute 8 × 60 = 480 GPU-seconds and $0.60:
BADPUT_MINUTES = {"startup": 30, "checkpoint_save": 15, "evaluation": 10, "data_wait": 6,
                  "exposed_communication": 3, "disruption": 175 + 15, "goodput": 140 + 176}
assert sum(BADPUT_MINUTES.values()) == 6 * 60 + 210      # both jobs' minutes, every one in one kind
NODE_MINUTE_S, NODE_MINUTE_USD = GPUS * 60, GPUS * 60 * PER_GPU_S
assert NODE_MINUTE_USD == D("0.60")


def build_badput(root: Path) -> Landing:
    L = Landing(root)
    L.config = {"teams": {"ml": {"projects": ["p9"]}}, "slurm_accounts": {"acct9": "p9"}}
    L.node("b1", pool="pool-b1", team="infra")
    L.node_hours("b1", utc(2026, 11, 2), 24, PRICE)
    L.job("c1", "7001", account="acct9", start="2026-11-02T00:00:00", end="2026-11-02T06:00:00",
          state="NODE_FAIL", host="b1", comment="run_id=rb", submit="2026-11-01T23:40:00")
    L.job("c1", "7002", account="acct9", start="2026-11-02T06:30:00", end="2026-11-02T10:00:00",
          state="COMPLETED", host="b1", comment="run_id=rb", submit="2026-11-02T06:10:00")
    L.telemetry("b1", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 6), "7001", True),
                               Activity(utc(2026, 11, 2, 6, 30), utc(2026, 11, 2, 10), "7002", True)])
    L.event("rb", "step", utc(2026, 11, 2, 0, 30), job_id="7001", step=1, tokens=1000)
    for h in (1, 2, 3):
        L.event("rb", "step", utc(2026, 11, 2, h), job_id="7001", step=100 * h, tokens=1000)
        L.event("rb", "checkpoint_started", utc(2026, 11, 2, h), job_id="7001", step=100 * h)
        L.event("rb", "checkpoint_saved", utc(2026, 11, 2, h, 5), job_id="7001", step=100 * h)
    L.event("rb", "step", utc(2026, 11, 2, 4), job_id="7001", step=400, tokens=1000)        # lost
    L.event("rb", "checkpoint_loaded", utc(2026, 11, 2, 6, 40), job_id="7002", step=300)
    L.event("rb", "step", utc(2026, 11, 2, 6, 45), job_id="7002", step=301, tokens=1000)
    L.event("rb", "step", utc(2026, 11, 2, 7, 30), job_id="7002", step=350, tokens=1000,
            data_seconds=270, comm_seconds=135.0)
    L.event("rb", "eval_started", utc(2026, 11, 2, 8, 15), job_id="7002", step=350)
    L.event("rb", "eval_done", utc(2026, 11, 2, 8, 25), job_id="7002", step=350)
    L.event("rb", "step", utc(2026, 11, 2, 9, 30), job_id="7002", step=400, tokens=1000)
    return L


@pytest.fixture(scope="module")
def badput(tmp_path_factory):
    ledger = _run(build_badput(tmp_path_factory.mktemp("badput")), [NOV2])
    yield ledger
    ledger.con.close()


def test_s9_badput_kinds_exact(badput):
    assert badput.rows("SELECT source, file, row_ref, reason FROM ops.quarantine") == []
    rows = badput.rows("""SELECT kind, team, project, billing_currency, gpu_seconds, effective_cost, billed_cost
                          FROM marts.fct_run_badput_daily WHERE day = ? AND run_id = 'rb' ORDER BY kind""", [NOV2])
    got = {k: (s, e, b) for k, team, project, currency, s, e, b in rows}
    assert {(r[1], r[2], r[3]) for r in rows} == {("ml", "p9", "USD")}
    want = {k: (float(m * NODE_MINUTE_S), m * NODE_MINUTE_USD, m * NODE_MINUTE_USD) for k, m in BADPUT_MINUTES.items()}
    assert got == want
    # the hand-computed figures: $18.00 of startup, $9.00 of saves, $114.00 of disruption
    assert (got["startup"][1], got["checkpoint_save"][1], got["disruption"][1]) == (D("18"), D("9"), D("114"))


def test_s9_badput_sums_to_the_run(badput):
    (seconds, cost), = badput.rows("""SELECT sum(gpu_seconds), sum(effective_cost) FROM marts.fct_run_efficiency_daily
                                      WHERE day = ? AND run_id = 'rb'""", [NOV2])
    (kind_seconds, kind_cost, kind_billed), = badput.rows(
        "SELECT sum(gpu_seconds), sum(effective_cost), sum(billed_cost) FROM marts.fct_run_badput_daily WHERE day = ?",
        [NOV2])
    assert (kind_seconds, kind_cost, kind_billed) == (seconds, cost, cost)
    assert cost == 570 * NODE_MINUTE_USD == D("342")


def test_s9_queue_wait_and_checkpoint_interval(badput):
    import math

    (row,) = badput.con.execute("SELECT * FROM marts.fct_run_overhead_daily WHERE day = ? AND run_id = 'rb'",
                                [NOV2]).fetchdf().to_dict("records")
    # both jobs waited 20 minutes (7001 was submitted the evening before), on 8 GPUs each
    assert (row["jobs"], row["queue_wait_seconds"]) == (2, 2400.0)
    assert row["queue_wait_gpu_hours"] == pytest.approx(2 * 1200 * 8 / 3600, rel=1e-12)
    # saves completed 01:05, 02:05, 03:05: an hour apart; each blocked 5 minutes
    assert (row["checkpoints"], row["checkpoint_interval_s"], row["checkpoint_save_s"]) == (3, 3600.0, 300.0)
    # the run held its node 6 h + 3.5 h of the day and was interrupted once
    mtbf = 6 * HOUR + 3.5 * HOUR
    assert row["mtbf_s"] == mtbf
    tau = math.sqrt(2 * 300 * mtbf)
    assert row["young_daly_interval_s"] == pytest.approx(tau, rel=1e-12)
    excess = (300 / 3600 + 3600 / (2 * mtbf)) - (300 / tau + tau / (2 * mtbf))
    assert excess > 0 and row["checkpoint_excess_overhead"] == pytest.approx(excess, rel=1e-12)
    assert float(row["checkpoint_interval_cost"]) == pytest.approx(342 * excess, abs=1e-9)
    assert row["billing_currency"] == "USD" and row["team"] == "ml"
