"""Savings opportunities, hand-computed (docs/ledger.md#savings-opportunities).

One day, 2026-11-02, H100 nodes of 8 GPUs, every figure worked out here from the rules:

- h1, billed $32.00 an hour 08:00–13:00: batch job 8001 holds its 8 GPUs 08:00–13:00, all idle. With
  policies.hung_job_cancel_minutes 60, a sweep would have cancelled it at 09:00: 4 hours × $32.00 =
  $128.00 (`cancel_hung_jobs`).
- h2, billed $32.00 an hour 00:00–10:00: notebook 8002 (`jupyter`: an interactive session) holds its 8
  GPUs 00:00–10:00, all idle. policies.idle_session_minutes 120: 8 hours × $32.00 = $256.00
  (`idle_session_timeout`).
- h3, on demand at $98.32 an hour all day: job 8003 busy on its 8 GPUs 00:00–09:36 (40 % of the day);
  the other 60 %, 14.4 hours, no job holds the node: 14.4 × $98.32 = $1,415.808 (`release_nodes`, above
  savings.release_idle_share 0.5).
- An unused commitment sp-1 of $50.00 over the day: `reduce_commitment` $50.00.

The window is 7 days with one of them in the ledger, so a month is 30 × the day.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import pytest

from tests.support.pipeline import dict_rows, ledger_of
from tests.support.scenario_builder import Activity, Landing, utc

NOV2 = date(2026, 11, 2)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("savings"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "clusters": {"c1": {"timezone": "UTC"}}, "savings": {"window_days": 7}}
    L.node("h1"), L.node("h2"), L.node("h3")
    L.node_hours("h1", utc(2026, 11, 2, 8), 5, D("32.00"))
    L.node_hours("h2", utc(2026, 11, 2, 0), 10, D("32.00"))
    L.node_hours("h3", utc(2026, 11, 2, 0), 24, D("98.32"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("50.00"), cd_id="sp-1", cd_status="Unused",
           pricing="Committed", service="Compute")
    L.job("c1", "8001", account="acct1", start="2026-11-02T08:00:00", end="2026-11-02T13:00:00",
          state="COMPLETED", host="h1", name="pretrain-shard")
    L.job("c1", "8002", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T10:00:00",
          state="COMPLETED", host="h2", name="jupyter", user="bob")
    L.job("c1", "8003", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T09:36:00",
          state="COMPLETED", host="h3", name="eval")
    L.telemetry("h1", [NOV2], [Activity(utc(2026, 11, 2, 8), utc(2026, 11, 2, 13), "8001", False)])
    L.telemetry("h2", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 10), "8002", False)])
    L.telemetry("h3", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 9, 36), "8003", True)])
    with ledger_of(L, [NOV2]) as con:
        yield con


def _opportunities(con) -> dict[tuple[str, str], dict]:
    rows = dict_rows(con, "SELECT * FROM marts.fct_savings_opportunities WHERE day = ?", [NOV2])
    by_subject = {(r["kind"], r["subject"]): r for r in rows}
    assert len(by_subject) == len(rows), "one row per kind and subject"
    return by_subject


def test_a_batch_job_idle_five_hours_saves_four_at_a_sixty_minute_sweep(ledger):
    o = _opportunities(ledger)[("cancel_hung_jobs", "8001")]
    assert o["saving_window"] == D("128.00") and o["saving_monthly"] == D("3840.00")
    assert o["gpu_hours"] == pytest.approx(32.0) and o["team"] == "ml" and o["billing_currency"] == "USD"
    assert "60 minutes" in o["action"] and "8001" in o["evidence"]


def test_a_notebook_idle_ten_hours_saves_eight_at_a_two_hour_timeout(ledger):
    o = _opportunities(ledger)
    assert ("cancel_hung_jobs", "8002") not in o, "a notebook is a session, not a hung batch job"
    s = o[("idle_session_timeout", "8002")]
    assert s["saving_window"] == D("256.00") and s["user_name"] == "bob"
    assert "120 idle minutes" in s["action"]


def test_an_on_demand_node_idle_sixty_percent_is_one_to_release(ledger):
    o = _opportunities(ledger)[("release_nodes", "h3")]
    assert o["saving_window"] == D("1415.808") and o["hostname"] == "h3"
    assert o["gpu_hours"] == pytest.approx(14.4 * 8)
    assert "60 %" in o["evidence"]
    assert ("release_nodes", "h1") not in _opportunities(ledger), "a node a job held all its billed hours"


def test_an_unused_commitment_is_one_to_reduce(ledger):
    o = _opportunities(ledger)[("reduce_commitment", "sp-1")]
    assert o["saving_window"] == D("50.00") and o["commitment_id"] == "sp-1"


def test_no_other_opportunity_and_never_more_than_the_window_cost(ledger):
    kinds = {k for k, _ in _opportunities(ledger)}
    assert kinds == {"cancel_hung_jobs", "idle_session_timeout", "release_nodes", "reduce_commitment"}
    (saved, cost), = ledger.execute(
        "SELECT (SELECT sum(saving_window) FROM marts.fct_savings_opportunities WHERE day = $d), "
        "(SELECT sum(effective_cost) FROM marts.fct_cost_daily WHERE day = $d)", {"d": NOV2}).fetchall()
    assert saved == D("128.00") + D("256.00") + D("1415.808") + D("50.00") and saved <= cost
