"""The under-use lens, hand-computed (docs/ledger.md#under-use-a-lens-on-productive-time).

Three H100 nodes of 8 GPUs, each billed $32.00 an hour (so $4.00 per GPU-hour) from 08:00 to 12:00 UTC on
2026-11-02, each running one 4-hour job, 08:00–12:00, with per-GPU job labels:

- u1: job 7001 holds 8 GPUs; GPUs 0–1 run at SM 0.7, GPUs 2–7 stay at 0. The six idle GPUs are
  `allocated_idle` (6 × 4 h = 86,400 GPU-s, $96.00), the two busy ones `productive` (28,800 GPU-s,
  $32.00); 6 GPUs never active, the right size is 2.
- u2: job 7002 holds 1 GPU at SM 0.10 (above the 0.05 idle threshold, below the 0.25 low-activity one):
  all of its 14,400 productive GPU-s are low activity, and so is all its cost, 14,400 × $4 / 3600 = $16.00.
- u3: job 7003 holds 1 GPU at SM 0.6 peaking at 6 GiB (6,144 MiB) of the H100's 80 GB: 0.075 of it. With
  20 % headroom it needs 7.2 GB; the smallest MIG profile of an 80 GB H100 that holds it is 1g.10gb (1 of
  7 compute slices), at the fleet's H100 price ($4.000000 a GPU-hour over the window: every billed
  GPU-second of the three nodes) × 1/7: 0.571428571428571428 a GPU-hour, floored to 1e-18. The job's
  14,400 GPU-s on it: 0.571428571428571428 × 4 = 2.285714285714285712.

Every expected number is worked out here from these rules, not from the pipeline.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import pytest

from tests.support.pipeline import dict_rows, ledger_of
from tests.support.scenario_builder import Activity, Landing, utc

NOV2 = date(2026, 11, 2)
NODE_HOUR = D("32.00")


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("underuse"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "clusters": {"c1": {"timezone": "UTC"}}}
    start, end = utc(2026, 11, 2, 8), utc(2026, 11, 2, 12)
    for host, job, user in (("u1", "7001", "carol"), ("u2", "7002", "dave"), ("u3", "7003", "erin")):
        L.node(host, pool="pool-u", team="infra")
        L.node_hours(host, start, 4, NODE_HOUR)
        L.job("c1", job, account="acct1", start="2026-11-02T08:00:00", end="2026-11-02T12:00:00",
              state="COMPLETED", host=host, gpus=8 if host == "u1" else 1, user=user)
    L.telemetry("u1", [NOV2], [Activity(start, end, "7001", True, gpus=(0, 1), sm=0.7),
                               Activity(start, end, "7001", False, gpus=(2, 3, 4, 5, 6, 7))])
    L.telemetry("u2", [NOV2], [Activity(start, end, "7002", True, gpus=(0,), sm=0.10)])
    L.telemetry("u3", [NOV2], [Activity(start, end, "7003", True, gpus=(0,), sm=0.6, fb_mib=6144.0)])
    with ledger_of(L, [NOV2]) as con:
        yield con


def _job(con, job_id: str) -> dict:
    rows = dict_rows(con, "SELECT * FROM marts.fct_job_efficiency_daily WHERE job_id = ? AND day = ?", [job_id, NOV2])
    assert len(rows) == 1, rows
    return rows[0]


def test_an_oversized_request_shows_the_gpus_it_never_used_and_its_right_size(ledger):
    j = _job(ledger, "7001")
    assert (j["gpus"], j["gpus_never_active"], j["right_size_gpus"]) == (8, 6, 2)
    assert j["productive_gpu_seconds"] == 28_800 and j["low_activity_gpu_seconds"] == 0
    assert j["low_activity_cost"] == 0 and j["effective_cost"] == D("128.00")
    assert j["sm_active_avg"] == pytest.approx(0.7)
    idle = ledger.execute("SELECT allocated_idle_gpu_seconds FROM marts.fct_job_cost WHERE job_id = '7001'").fetchall()
    assert idle == [(86_400.0,)]


def test_a_gpu_at_ten_percent_sm_is_low_activity_in_full_to_the_cent(ledger):
    j = _job(ledger, "7002")
    assert j["productive_gpu_seconds"] == 14_400 and j["low_activity_gpu_seconds"] == 14_400
    assert j["low_activity_cost"] == D("16.00") and j["low_activity_billed_cost"] == D("16.00")
    assert j["effective_cost"] == D("16.00")
    assert j["sm_active_avg"] == pytest.approx(0.10)
    assert (j["gpus_never_active"], j["right_size_gpus"]) == (0, 1)


def test_a_job_using_six_gib_of_an_80_gb_h100_fits_a_mig_slice(ledger):
    j = _job(ledger, "7003")
    assert j["fb_used_max_mib"] == 6144 and j["fb_used_max_fraction"] == pytest.approx(6144 / (80 * 1024))
    assert j["price_per_gpu_hour"] == D("4.000000")
    assert j["fits_smaller"] == "H100 SXM 1g.10gb"
    assert j["fits_smaller_price_per_gpu_hour"] == D("0.571428571428571428")
    assert j["fits_smaller_cost"] == D("2.285714285714285712")
    assert j["low_activity_gpu_seconds"] == 0
    # a job without memory readings is offered nothing
    assert _job(ledger, "7001")["fits_smaller"] is None


def test_each_user_gets_their_jobs_cost_by_category_with_the_lens(ledger):
    rows = {(u, c): (s, e, ls, lc) for u, c, s, e, ls, lc in ledger.execute(
        "SELECT user_name, category, gpu_seconds, effective_cost, low_activity_gpu_seconds, low_activity_cost "
        "FROM marts.fct_user_cost_daily WHERE day = ?", [NOV2]).fetchall()}
    assert rows == {
        ("carol", "productive"): (28_800, D("32.00"), 0, 0),
        ("carol", "allocated_idle"): (86_400, D("96.00"), 0, 0),
        ("dave", "productive"): (14_400, D("16.00"), 14_400, D("16.00")),
        ("erin", "productive"): (14_400, D("16.00"), 0, 0),
    }
    # the users of a team add up to its jobs' part of the ledger, exactly
    by_team = ledger.execute(
        "SELECT sum(effective_cost) FROM marts.fct_cost_daily WHERE day = ? AND team = 'ml' "
        "AND category IN ('productive', 'allocated_idle', 'rerun_loss', 'failed_job', 'unmonitored')",
        [NOV2]).fetchall()[0][0]
    assert by_team == sum(e for _, e, _, _ in rows.values()) == D("160.00")


def test_the_team_report_and_a_users_report_show_the_under_use(ledger, tmp_path):
    from pipelines.reports import write_team_report
    from pipelines.reports.user_report import check_user_request, write_user_report

    team_md = write_team_report(ledger, "ml", NOV2, NOV2, "2026-11-02", tmp_path)[1].read_text()
    # productive cost $32 + $16 + $16 = $64, of it $16.00 (job 7002) at low SM activity
    assert "- **Busy but under-used:** $16.00 = 25.0% of productive cost at low SM activity" in team_md
    rows = {line.split(" | ")[0].lstrip("| "): line for line in team_md.splitlines() if line.startswith("| 700")}
    assert " | 8 (2) | 70% | " in rows["7001 (c1) train"]                       # 8 GPUs held, 2 ever active
    assert " | 10% | 4.0 | $16.00 | – | – | $16.00 |" in rows["7002 (c1) train"]
    assert " | H100 SXM 1g.10gb | $2.29 | $16.00 |" in rows["7003 (c1) train"]   # 2.285714… on a 1/7 slice
    user_md = write_user_report(ledger, "dave", NOV2, NOV2, "2026-11-02", tmp_path)[1].read_text()
    assert "| ml | Productive GPU time | 4.0 | $16.00 | 100.0% | $16.00 |" in user_md
    with pytest.raises(ValueError, match="no user 'davd' in the ledger — did you mean 'dave'"):
        check_user_request(ledger, "davd", NOV2, NOV2)
