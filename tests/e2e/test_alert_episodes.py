"""Alerts as episodes (docs/plans.md#alerts) on a hand-built landing zone, ticked by the live sensor the
way the daemon does (every 30 minutes here) and evaluated as the daily run does (as of the day's end):

- a notebook (job name `jupyter-*`) on one GPU, busy 00:00-01:00, idle 01:00-11:00, busy again until
  12:00: one idle_session alert, opened at 03:00 (two hours idle: policies.idle_session_minutes), updated
  while it stays idle, resolved when it gets busy;
- a batch job on 8 GPUs, busy 00:00-01:00, idle 01:00-06:00 when it ends: one hung_job, opened at 01:30,
  critical from 03:00 (4 × hung_minutes: an escalation), resolved when it ends;
- a run plan climbing its budget's thresholds over four days: one budget_threshold alert.
"""

from datetime import date, datetime, timedelta

import duckdb
import pytest

from pipelines.alerts.live import detect, live_path, run_live
from pipelines.alerts.raising import raise_alerts, raise_found
from pipelines.lib.config import load_config
from pipelines.lib.warehouse import bootstrap, connect
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)
T0 = datetime(2026, 11, 2)


def _at(h: int, m: int = 0) -> datetime:
    return T0 + timedelta(hours=h, minutes=m)


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    land = Landing(tmp_path_factory.mktemp("episodes"))
    land.config = {"teams": {"research": {"projects": ["llm"]}}}
    land.job("c1", "201", account="llm", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00",
             state="COMPLETED", host="h3", gpus=1, name="jupyter-alice")
    land.telemetry("h3", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 1), "201", True, gpus=(0,)),
                                 Activity(utc(2026, 11, 2, 1), utc(2026, 11, 2, 11), "201", False, gpus=(0,)),
                                 Activity(utc(2026, 11, 2, 11), utc(2026, 11, 2, 12), "201", True, gpus=(0,))])
    land.job("c1", "301", account="llm", start="2026-11-02T00:00:00", end="2026-11-02T06:00:00",
             state="CANCELLED", host="h4")
    land.telemetry("h4", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 1), "301", True),
                                 Activity(utc(2026, 11, 2, 1), utc(2026, 11, 2, 6), "301", False)])
    land.write()
    cfg = load_config(land.config_path)
    # the live sensor every 30 minutes until 13:00; ops.alerts after each tick
    seen = []
    for tick in range(1, 27):
        run_live(land.landing, cfg, land.warehouse, _at(0, 30 * tick))
        seen.append((_at(0, 30 * tick), _alerts(land.warehouse)))
    return land, seen


def _alerts(warehouse) -> dict[str, dict]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        cur = con.execute("SELECT * FROM ops.alerts")
        names = [d[0] for d in cur.description]
        return {r[0]: dict(zip(names, r)) for r in cur.fetchall()}


def _of(alerts: dict[str, dict], kind: str) -> list[dict]:
    return [a for a in alerts.values() if a["kind"] == kind]


def test_a_notebook_idle_for_ten_hours_is_one_idle_session_that_resolves_when_it_gets_busy(scene):
    land, seen = scene
    final = seen[-1][1]
    [session] = _of(final, "idle_session")
    assert not _of(final, "hung_job") or all(a["subject"] != "c1/201" for a in _of(final, "hung_job"))
    assert (session["subject_type"], session["subject"], session["team"]) == ("job", "c1/201", "research")
    # idle from one scrape after the last busy sample (00:59:30 + 30 s); two hours later it held
    assert session["opened_at"] == _at(3)
    # the last tick that found it idle (11:00: complete minutes to 10:59), and the first busy sample
    assert session["updated_at"] == _at(11)
    assert session["resolved_at"] == _at(11)
    assert session["revision"] == 0 and session["severity"] == "warning"
    assert "held 1 GPU idle for 10 h 00 min" in session["message"] and "jupyter-alice" in session["message"]
    # never more than this one alert about the session, at any tick
    assert all(len([a for a in alerts.values() if a["subject"] == "c1/201"]) <= 1 for _, alerts in seen)
    # open from the 03:00 tick up to the 11:00 tick; the 11:30 tick resolved it
    open_at = [t for t, alerts in seen if any(a["subject"] == "c1/201" and a["resolved_at"] is None
                                              for a in alerts.values())]
    assert (min(open_at), max(open_at)) == (_at(3), _at(11))


def test_a_batch_job_idle_for_five_hours_is_one_hung_job_escalated_once_and_resolved_when_it_ends(scene):
    land, seen = scene
    [hung] = _of(seen[-1][1], "hung_job")
    assert hung["subject"] == "c1/301" and hung["opened_at"] == _at(1, 30)
    assert hung["resolved_at"] == _at(6) and hung["severity"] == "critical"
    # warning at 01:30, critical from 03:00 (4 × 30 idle minutes): one escalation, due for delivery again
    assert hung["revision"] == 1 and hung["escalated_at"] == _at(3)
    assert "held 8 GPUs idle for 5 h 00 min, 2026-11-02 01:00 to 06:00 UTC" in hung["message"]


def test_the_days_end_agrees_with_the_sensor_and_changes_nothing(scene):
    land, seen = scene
    before = seen[-1][1]
    cfg = load_config(land.config_path)
    with duckdb.connect(str(live_path(land.warehouse))) as live:
        found = detect(live, cfg, _at(24))
    # the daily run's evaluation finds the same episodes, under the same alert_id, already resolved
    assert set(found["alert_id"]) == set(before)
    assert found["resolved_at"].null_count() == 0
    # merged as the daily run does, as of the day's end and again: ops.alerts does not change, because
    # every episode was last changed no earlier than that evaluation's as_of… or changed to what it was
    con = connect(land.warehouse)
    try:
        bootstrap(con)
        con.register("found_daily", found)
        for _ in range(2):
            assert sum(raise_found(con, "found_daily", ("hung_job", "step_time_regression"), DAY, _at(24),
                                   datetime(2026, 11, 3), {}).values()) == 0
        # an evaluation earlier than the episodes' last change (a backfill) touches nothing either
        raise_found(con, "found_daily", ("hung_job", "step_time_regression"), DAY, _at(2), datetime(2026, 11, 3), {})
    finally:
        con.close()
    assert _alerts(land.warehouse) == before


# --- a budget climbing its thresholds ---------------------------------------------------------------

def _budget_day(con, day: date, burn_pct: float) -> None:
    con.execute("DELETE FROM marts.fct_run_budget_daily")
    con.execute("""INSERT INTO marts.fct_run_budget_daily VALUES
                   ($day, 'r1', 'research', 'llm', 'USD', $burn, 40.0, $burn * 10, 1000.0, 5000.00, $burn * 10,
                    NULL, NULL, $burn, 0.0)""", {"day": day, "burn": burn_pct})


def _budget_warehouse(path):
    con = connect(path)
    bootstrap(con)
    con.execute("CREATE SCHEMA IF NOT EXISTS marts")
    con.execute("""CREATE TABLE marts.fct_run_budget_daily (day DATE, run_id VARCHAR, team VARCHAR,
                   project VARCHAR, billing_currency VARCHAR, burn_pct DOUBLE, progress_pct DOUBLE,
                   gpu_hours_to_date DOUBLE, budget_gpu_hours DOUBLE, budget_cost DECIMAL(38, 18),
                   cost_to_date DECIMAL(38, 18), projected_gpu_hours DOUBLE, projected_overrun_cost DECIMAL(38, 18),
                   planned_burn_pct DOUBLE, burn_ahead_pct DOUBLE)""")
    con.execute("CREATE TABLE marts.fct_cost_daily (day DATE, project VARCHAR, billing_currency VARCHAR, "
                "effective_cost DECIMAL(38, 18))")
    return con


def test_alerts_severity_sets_a_kinds_severity(tmp_path):
    con = _budget_warehouse(tmp_path / "w.duckdb")
    try:
        _budget_day(con, DAY, 35.0)
        as_of = datetime.combine(DAY + timedelta(days=1), datetime.min.time())
        params = {**load_config(None).sql_params(), "day": DAY, "as_of": as_of}
        raise_alerts(con, ("budget_threshold",), params, DAY, as_of, as_of, {"budget_threshold": "critical"})
        assert con.execute("SELECT threshold, severity FROM ops.alerts").fetchall() == [("30%", "critical")]
    finally:
        con.close()


def test_a_budget_climbing_its_thresholds_is_one_alert_escalated_at_each(tmp_path):
    con = _budget_warehouse(tmp_path / "w.duckdb")
    try:
        params = load_config(None).sql_params()
        revisions = []
        for n, burn in enumerate([35.0, 55.0, 56.0, 85.0, 101.0]):
            day = DAY + timedelta(days=n)
            _budget_day(con, day, burn)
            as_of = datetime.combine(day + timedelta(days=1), datetime.min.time())
            raise_alerts(con, ("budget_threshold",), {**params, "day": day, "as_of": as_of}, day, as_of,
                         as_of, {})
            rows = con.execute("SELECT threshold, severity, revision, status, cost_at_stake FROM ops.alerts").fetchall()
            assert len(rows) == 1, rows
            revisions.append(rows[0][:3])
            con.execute("UPDATE ops.alerts SET status = 'delivered'")  # as a delivery pass would
        # 30 % info, 50 %, (the same 50 %: new figures, not due again), 80 % warning, 100 % critical
        assert revisions == [("30%", "info", 0), ("50%", "info", 1), ("50%", "info", 1), ("80%", "warning", 2),
                             ("100%", "critical", 3)]
        assert con.execute("SELECT status, cost_at_stake FROM ops.alerts").fetchall() == [("delivered", 1010)]
        # the run leaves the day's figures: the next evaluation resolves its budget alert
        con.execute("DELETE FROM marts.fct_run_budget_daily")
        later = DAY + timedelta(days=6)
        as_of = datetime.combine(later, datetime.min.time())
        raise_alerts(con, ("budget_threshold",), {**params, "day": later, "as_of": as_of}, later, as_of, as_of, {})
        assert con.execute("SELECT resolved_at FROM ops.alerts").fetchall() == [(as_of,)]
    finally:
        con.close()


# --- a simulated world, every day evaluated again -------------------------------------------------

def test_re_running_every_day_of_a_simulated_world_raises_nothing_and_changes_nothing(simulated_ledger, tmp_path):
    """The daily asset itself, run again for each day of the shared simulated ledger (2 days, 4 nodes)
    on a copy of its warehouse: every episode was last changed no earlier than its day's evaluation, or
    is changed to what it was, so ops.alerts stays as it is, row for row."""
    import shutil

    import dagster as dg

    from pipelines.defs.alerts.assets import alerts
    from pipelines.lib.dagster_glue.resources import landing_resource, warehouse_resource
    from tests.support.pipeline import pipeline_env

    wh = tmp_path / "warehouse.duckdb"
    shutil.copyfile(simulated_ledger.warehouse, wh)
    before = _alerts(wh)
    assert before, "the simulated fleet raises alerts"
    # the world's episodes: one per kind and subject, resolved when they no longer hold
    assert len({(a["kind"], a["subject_type"], a["subject"]) for a in before.values()}) == len(before)
    assert all(a["opened_at"] and a["updated_at"] for a in before.values())
    with pipeline_env(simulated_ledger.landing, wh, simulated_ledger.config):
        for day in [*simulated_ledger.days, *reversed(simulated_ledger.days)]:  # in order, then backwards
            result = dg.materialize([alerts], partition_key=day.isoformat(),
                                    resources={"duckdb": warehouse_resource(), "landing": landing_resource()})
            assert result.success
            raised = result.asset_materializations_for_node("ops__alerts")[0].metadata["raised"].value
            assert sum(raised.values()) == 0, (day, raised)
    assert _alerts(wh) == before


def test_a_warehouse_made_before_episodes_migrates_and_its_rows_keep_working(tmp_path):
    """ops.alerts as the version before episodes made it (one row per subject and threshold): the
    bootstrap adds the episode columns; its rows read as opened when raised, and the first evaluation of
    their kind resolves them (they never held under an episode's id)."""
    import subprocess

    old_sql = subprocess.run(["git", "show", "da1930c:sql/ops/alerts.sql"], capture_output=True, text=True,
                             check=True).stdout
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA ops")
        con.execute(old_sql)
        con.execute("""INSERT INTO ops.alerts (alert_id, kind, severity, subject_type, subject, threshold, team, day,
                       raised_at, message, status) VALUES ('legacy', 'hung_job', 'warning', 'job', '101',
                       'c1 idle since 2026-11-01T01:00:00Z', 'research', '2026-11-01', '2026-11-01 02:00', 'm', 'delivered')""")
    con = connect(path)
    try:
        bootstrap(con)
        [(opened, updated, resolved, revision)] = con.execute(
            "SELECT opened_at, updated_at, resolved_at, revision FROM ops.alerts").fetchall()
        assert (opened, updated, resolved, revision) == (datetime(2026, 11, 1, 2), None, None, 0)
        con.execute("CREATE TEMP TABLE nothing_found AS SELECT * FROM ops.alerts WHERE FALSE")
        con.execute("ALTER TABLE nothing_found ADD COLUMN since_edge BOOLEAN")
        raise_found(con, "nothing_found", ("hung_job",), DAY, _at(24), datetime(2026, 11, 3), {})
        assert con.execute("SELECT status, resolved_at FROM ops.alerts").fetchall() == [("delivered", _at(24))]
    finally:
        con.close()
