"""The `checkpoint_interval` savings opportunity, hand-computed end to end
(docs/ledger.md#savings-opportunities, #queue-wait-and-checkpoint-interval).

A run that checkpoints every 2 hours with 10-minute saves, interrupted every 80 minutes: Young–Daly
puts the optimum at τ = √(2 · 600 s · 4800 s) = 2400 s, 40 minutes.

One day, 2026-11-02, node k1 of 8 GPUs billed $36.00 an hour 00:00–04:00 ($0.60 a node-minute), busy
whenever a job runs, and run rc's four attempts back to back (no gap: nothing is idle):

- job 9001 00:00–02:30 NODE_FAIL (150 min): first step 00:05 (startup 5 min), blocking saves
  00:10–00:20 and 02:10–02:20 (2 × 10 min), two hours apart; interrupted at 02:30, 02:20–02:30 lost.
- job 9002 02:30–03:20 NODE_FAIL (50 min): the last save of the run was 02:20, before it began, so the
  whole attempt is lost.
- job 9003 03:20–03:40 FAILED (20 min): likewise, all lost.
- job 9004 03:40–04:00 COMPLETED (20 min): loads the checkpoint, first step 03:45 (restart 5 min).

Overhead (fct_run_overhead_daily): checkpoint_interval_s = 02:20 − 00:20 = 7200, checkpoint_save_s =
600, mtbf_s = wall 150 + 50 + 20 + 20 = 240 min = 14400 s over 3 interruptions = 4800 s,
young_daly_interval_s = 2400. The excess overhead is (C/τ + τ/2M) at the observed interval minus at
the optimum: (600/7200 + 7200/9600) − (600/2400 + 2400/9600) = 5/6 − 1/2 = 1/3; the run cost the day
240 node-minutes × $0.60 = $144.00, so checkpoint_interval_cost = $144.00 / 3 = $48.00 (a DOUBLE:
to 1e-9).

The pool it is capped by: checkpoint_save 20 min + disruption (10 + 50 + 20 + 5 =) 85 min = 105
node-minutes × $0.60 = $63.00 > $48.00, so the saving is the overhead's $48.00. The window is 7 days
with one of them in the ledger: $1,440.00 a month.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import pytest

from tests.support.pipeline import dict_rows, ledger_of
from tests.support.scenario_builder import Activity, Landing, utc

NOV2 = date(2026, 11, 2)
NODE_MINUTE = D("0.60")                          # $36.00 an hour over 8 GPUs: 480 GPU-seconds a minute
RUN_COST = 240 * NODE_MINUTE                     # 00:00–04:00
POOL = (20 + 85) * NODE_MINUTE                   # checkpoint_save + disruption
EXCESS = (600 / 7200 + 7200 / (2 * 4800)) - (600 / 2400 + 2400 / (2 * 4800))
assert (RUN_COST, POOL) == (D("144.00"), D("63.00")) and EXCESS == pytest.approx(1 / 3, rel=1e-15)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("savings_checkpoint"))
    L.config = {"teams": {"ml": {"projects": ["p7"]}}, "slurm_accounts": {"acct7": "p7"},
                "clusters": {"c1": {"timezone": "UTC"}}, "savings": {"window_days": 7}}
    L.node("k1", pool="pool-k", team="infra")
    L.node_hours("k1", utc(2026, 11, 2), 4, D("36.00"))
    attempts = [("9001", (0, 0), (2, 30), "NODE_FAIL"), ("9002", (2, 30), (3, 20), "NODE_FAIL"),
                ("9003", (3, 20), (3, 40), "FAILED"), ("9004", (3, 40), (4, 0), "COMPLETED")]
    for job, (h0, m0), (h1, m1), state in attempts:
        L.job("c1", job, account="acct7", start=f"2026-11-02T{h0:02d}:{m0:02d}:00",
              end=f"2026-11-02T{h1:02d}:{m1:02d}:00", state=state, host="k1", comment="run_id=rc")
    L.telemetry("k1", [NOV2], [Activity(utc(2026, 11, 2, *a[1]), utc(2026, 11, 2, *a[2]), a[0], True)
                               for a in attempts])
    L.event("rc", "step", utc(2026, 11, 2, 0, 5), job_id="9001", step=1, tokens=1000)
    for h, step in ((0, 10), (2, 200)):
        L.event("rc", "checkpoint_started", utc(2026, 11, 2, h, 10), job_id="9001", step=step)
        L.event("rc", "checkpoint_saved", utc(2026, 11, 2, h, 20), job_id="9001", step=step)
    L.event("rc", "step", utc(2026, 11, 2, 1), job_id="9001", step=100, tokens=1000)
    L.event("rc", "step", utc(2026, 11, 2, 2), job_id="9001", step=200, tokens=1000)
    L.event("rc", "step", utc(2026, 11, 2, 2, 25), job_id="9001", step=220, tokens=1000)   # lost
    for job, (h, m) in (("9002", (2, 30)), ("9003", (3, 20)), ("9004", (3, 40))):
        L.event("rc", "checkpoint_loaded", utc(2026, 11, 2, h, m + 2), job_id=job, step=200)
        L.event("rc", "step", utc(2026, 11, 2, h, m + 5), job_id=job, step=201, tokens=1000)
    with ledger_of(L, [NOV2]) as con:
        yield con


def _row(con, sql: str) -> dict:
    rows = dict_rows(con, sql, [NOV2])
    assert len(rows) == 1, rows
    return rows[0]


def test_the_run_costs_what_its_badput_pool_and_node_say(ledger):
    assert ledger.execute("SELECT source, file, row_ref, reason FROM ops.quarantine").fetchall() == []
    kinds = dict(ledger.execute("""SELECT kind, effective_cost FROM marts.fct_run_badput_daily
                                   WHERE day = ? AND run_id = 'rc'""", [NOV2]).fetchall())
    assert kinds["checkpoint_save"] == 20 * NODE_MINUTE and kinds["disruption"] == 85 * NODE_MINUTE
    assert kinds["startup"] == 5 * NODE_MINUTE and sum(kinds.values()) == RUN_COST


def test_overhead_of_a_two_hour_interval_against_a_forty_minute_optimum(ledger):
    o = _row(ledger, "SELECT * FROM marts.fct_run_overhead_daily WHERE day = ? AND run_id = 'rc'")
    assert (o["team"], o["project"], o["billing_currency"]) == ("ml", "p7", "USD")
    assert (o["jobs"], o["checkpoints"]) == (4, 2)
    assert (o["checkpoint_interval_s"], o["checkpoint_save_s"], o["mtbf_s"]) == (7200.0, 600.0, 4800.0)
    assert o["young_daly_interval_s"] == 2400.0
    assert o["checkpoint_excess_overhead"] == pytest.approx(1 / 3, rel=1e-12)
    assert float(o["checkpoint_interval_cost"]) == pytest.approx(48.0, abs=1e-9)


def test_the_saving_is_the_overhead_cost_within_the_pool(ledger):
    o = _row(ledger, "SELECT * FROM marts.fct_run_overhead_daily WHERE day = ? AND run_id = 'rc'")
    s = _row(ledger, "SELECT * FROM marts.fct_savings_opportunities WHERE day = ? AND kind = 'checkpoint_interval'")
    # money_units of a DECIMAL(38, 10) is exact: the saving is the overhead's cost to the 1e-10, within the pool
    cost = D(o["checkpoint_interval_cost"])
    assert cost < POOL and s["saving_window"] == min(cost, POOL)
    # the DOUBLE's error (1/3 is 0.33333333333333337, × 144 off by ~1e-14) is gone at DECIMAL(38, 10)
    assert cost == s["saving_window"] == D("48.00") and s["saving_monthly"] == D("1440.00")
    assert (s["subject_type"], s["subject"], s["run_id"]) == ("run", "rc", "rc")
    assert (s["team"], s["project"], s["billing_currency"]) == ("ml", "p7", "USD")
    assert (s["window_days"], s["days_covered"]) == (7, 1)
    assert s["saving_monthly"] == s["saving_window"] * 30 / s["days_covered"]
    assert "every 40 minutes, not every 120" in s["action"]
    assert "every 120 minutes (saves of 10.0 minutes" in s["evidence"]


def test_never_more_than_the_window_cost(ledger):
    (saved, cost), = ledger.execute(
        "SELECT (SELECT sum(saving_window) FROM marts.fct_savings_opportunities WHERE day = $d), "
        "(SELECT sum(effective_cost) FROM marts.fct_cost_daily WHERE day = $d)", {"d": NOV2}).fetchall()
    assert cost == RUN_COST and saved == D("48.00") <= cost
    # no run_config (no MFU gap), every job busy throughout, the node held all its billed hours
    kinds = ledger.execute("SELECT kind FROM marts.fct_savings_opportunities WHERE day = ?", [NOV2]).fetchall()
    assert kinds == [("checkpoint_interval",)]
