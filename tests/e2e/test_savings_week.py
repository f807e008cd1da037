"""Idle nodes over a week, hand-computed (docs/ledger.md#savings-opportunities): the share that decides
`release_nodes` is the window's, not a day's, and only a node paid on demand is one to release.

Seven days, 2026-11-02 to 11-08, two H100 nodes of 8 GPUs billed every hour (168 hours each):

- h4, on demand at $98.32 an hour: job 9001 busy on its 8 GPUs 11-02 00:00 to 11-04 19:12 (67.2 hours,
  40 % of the week); no job the other 100.8 hours. On its first two days it is never idle, so a day's
  share would not see it. The week: 100.8 × $98.32 = $9,910.656 (`release_nodes`).
- h5, the same hours and work but paid by reservation ri-1 (its hourly lines are a used commitment):
  its idle $9,910.656 is a commitment to shrink (`reduce_commitment`, subject the node, paid by ri-1),
  never a node to release.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal as D

import pytest

from tests.support.pipeline import dict_rows, ledger_of
from tests.support.scenario_builder import Activity, Landing, utc

DAYS = [date(2026, 11, 2) + timedelta(days=i) for i in range(7)]
LAST = DAYS[-1]
RATE = D("98.32")
IDLE_HOURS = D("100.8")  # 168 h less the 67.2 h job 9001 and 9002 keep their nodes busy


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("savings_week"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "clusters": {"c1": {"timezone": "UTC"}}, "savings": {"window_days": 7}}
    L.node("h4"), L.node("h5")
    L.node_hours("h4", utc(2026, 11, 2), 168, RATE)
    L.node_hours("h5", utc(2026, 11, 2), 168, RATE, pricing="Committed", cd_id="ri-1", cd_status="Used")
    busy_end = utc(2026, 11, 4, 19, 12)
    for job, host in (("9001", "h4"), ("9002", "h5")):
        L.job("c1", job, account="acct1", start="2026-11-02T00:00:00", end="2026-11-04T19:12:00",
              state="COMPLETED", host=host, name="pretrain")
        L.telemetry(host, DAYS, [Activity(utc(2026, 11, 2), busy_end, job, True)])
    with ledger_of(L, DAYS) as con:
        yield con


def _last_day(con) -> dict[tuple[str, str], dict]:
    return {(r["kind"], r["subject"]): r
            for r in dict_rows(con, "SELECT * FROM marts.fct_savings_opportunities WHERE day = ?", [LAST])}


def test_an_on_demand_node_idle_sixty_percent_of_a_week_is_one_to_release(week):
    o = _last_day(week)[("release_nodes", "h4")]
    assert o["saving_window"] == IDLE_HOURS * RATE == D("9910.656")
    assert (o["window_days"], o["days_covered"]) == (7, 7)
    assert o["saving_monthly"] == D("9910.656") * 30 / 7
    assert o["gpu_hours"] == pytest.approx(float(IDLE_HOURS) * 8)
    assert "60 %" in o["evidence"] and "7 days" in o["evidence"]
    assert o["action"].startswith("Release node h4")


def test_a_committed_node_idle_as_long_is_a_commitment_to_shrink_not_a_node_to_release(week):
    rows = _last_day(week)
    assert ("release_nodes", "h5") not in rows
    o = rows[("reduce_commitment", "h5")]
    assert o["saving_window"] == D("9910.656") and o["commitment_id"] == "ri-1"
    assert "ri-1" in o["action"]


def test_a_day_the_node_was_busy_all_day_has_nothing_to_release_yet(week):
    (n,) = week.execute("SELECT count(*) FROM marts.fct_savings_opportunities WHERE day = ? "
                        "AND kind = 'release_nodes'", [DAYS[0]]).fetchone()
    assert n == 0


def test_the_weeks_opportunities_stay_within_its_cost(week):
    (saved, cost), = week.execute(
        "SELECT (SELECT sum(saving_window) FROM marts.fct_savings_opportunities WHERE day = $d), "
        "(SELECT sum(effective_cost) FROM marts.fct_cost_daily WHERE day BETWEEN $d - 6 AND $d)",
        {"d": LAST}).fetchall()
    assert saved == 2 * IDLE_HOURS * RATE and saved <= cost
