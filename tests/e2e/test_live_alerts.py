"""The live alerts (pipelines/alerts/live.py, docs/plans.md#alerts) on a hand-built landing zone: a job
idle from 01:00 to 02:00 and a run whose steps go from 6 s to 9 s at 02:00. Every figure below is worked by
hand from the inputs: when each alert is first due, its stretch's start (the alert's identity), its
GPU-seconds and money; raised once, whichever tick or run finds it."""

from datetime import date, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest

from pipelines.cli.main import main
from pipelines.alerts.live import detect, live_path, run_live
from pipelines.lib.config import load_config
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)
T0 = datetime(2026, 11, 2)


def _at(h: int, m: int = 0, s: int = 0) -> datetime:
    return T0 + timedelta(hours=h, minutes=m, seconds=s)


@pytest.fixture
def scene(tmp_path):
    land = Landing(tmp_path)
    land.config = {"teams": {"research": {"projects": ["llm"]}}}
    # job 101 on h1: busy, then its 8 GPUs idle 01:00-02:00 (a hung job), then busy until 04:00
    land.job("c1", "101", account="llm", start="2026-11-02T00:00:00", end="2026-11-02T04:00:00",
             state="COMPLETED", host="h1")
    land.telemetry("h1", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 1), "101", True),
                                 Activity(utc(2026, 11, 2, 1), utc(2026, 11, 2, 2), "101", False),
                                 Activity(utc(2026, 11, 2, 2), utc(2026, 11, 2, 4), "101", True)])
    # job 102 on h2, run r1: 20 idle minutes (no hung job), steps of 6 s until 02:00, then of 9 s
    land.job("c1", "102", account="llm", start="2026-11-02T00:00:00", end="2026-11-02T04:00:00",
             state="COMPLETED", host="h2")
    land.telemetry("h2", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 0, 30), "102", True),
                                 Activity(utc(2026, 11, 2, 0, 30), utc(2026, 11, 2, 0, 50), "102", False),
                                 Activity(utc(2026, 11, 2, 0, 50), utc(2026, 11, 2, 4), "102", True)])
    t, step = _at(0), 0
    while t < _at(2):                     # 10 steps a minute
        t, step = t + timedelta(seconds=60), step + 10
        land.event("r1", "step", t.replace(tzinfo=utc(2026, 1, 1).tzinfo), job_id="102", step=step, tokens=1000)
    while t < _at(4):                     # 10 steps every 90 s from 02:00
        t, step = t + timedelta(seconds=90), step + 10
        land.event("r1", "step", t.replace(tzinfo=utc(2026, 1, 1).tzinfo), job_id="102", step=step, tokens=1000)
    land.write()
    # the ledger's money of the day before: h1 and h2 cost 0.001 USD a GPU-second
    with duckdb.connect(str(land.warehouse)) as con:
        con.execute("CREATE SCHEMA marts")
        con.execute("""CREATE TABLE marts.fct_node_hourly AS
                       SELECT DATE '2026-11-01' AS day, h AS hostname, 'USD' AS billing_currency,
                              691.2::DECIMAL(38, 18) AS effective_cost, 691200::BIGINT AS gpu_seconds
                       FROM (VALUES ('h1'), ('h2')) v(h)""")
    return land


def _alerts(land):
    with duckdb.connect(str(land.warehouse), read_only=True) as con:
        return con.sql("SELECT * FROM ops.alerts ORDER BY kind").pl().to_dicts()


def _tick(land, as_of):
    return run_live(land.landing, load_config(land.config_path), land.warehouse, as_of)


def test_a_hung_job_is_raised_once_its_idle_stretch_reaches_30_minutes(scene):
    # idle from one scrape after the last busy sample (00:59:30 + 30 s); at 01:29 the complete minutes
    # (to 01:28) show 29 idle minutes (to one scrape after 01:28:30), at 01:30 30 of them
    assert _tick(scene, _at(1, 29)).raised == {"hung_job": 0, "idle_session": 0, "step_time_regression": 0}
    assert _tick(scene, _at(1, 30)).raised == {"hung_job": 1, "idle_session": 0, "step_time_regression": 0}
    [alert] = _alerts(scene)
    assert (alert["kind"], alert["subject_type"], alert["subject"], alert["team"], alert["severity"]) == \
        ("hung_job", "job", "c1/101", "research", "warning")
    assert alert["threshold"] == "idle since 2026-11-02T01:00:00Z"
    assert alert["day"] == DAY and alert["status"] == "pending"
    # 30 minutes of 8 GPUs at 0.001 USD a GPU-second
    assert (alert["cost_at_stake"], alert["billing_currency"]) == (Decimal("14.4"), "USD")
    # later ticks find the same stretch (same start, same alert_id): nothing new
    assert _tick(scene, _at(1, 50)).raised == {"hung_job": 0, "idle_session": 0, "step_time_regression": 0}
    assert len(_alerts(scene)) == 1


def test_a_step_time_regression_is_raised_after_30_slow_minutes_with_its_extra_gpu_seconds(scene):
    # steps slow from 02:00; the median of three step events is slow from the second slow event (02:03:00),
    # so the stretch starts where that one began (02:01:30) and spans 30 minutes at the event of 02:31:30
    assert _tick(scene, _at(2, 31)).raised["step_time_regression"] == 0
    assert _tick(scene, _at(2, 31, 30)).raised["step_time_regression"] == 1
    [alert] = [a for a in _alerts(scene) if a["kind"] == "step_time_regression"]
    assert (alert["subject_type"], alert["subject"], alert["team"]) == ("run", "r1", "research")
    assert alert["threshold"] == "slow since 2026-11-02T02:01:30Z"
    assert "on h2" in alert["message"]
    # 20 slow events in the stretch (02:03:00 … 02:31:30), 10 steps each 3 s slower than the 6 s baseline,
    # on 8 GPUs: 20 · 30 s · 8 = 4800 extra GPU-seconds, at 0.001 USD
    assert alert["cost_at_stake"] == Decimal("4.8")
    assert alert["severity"] == "warning"                 # 9 s is 1.5 × 6 s, below 2 ×


def test_the_days_end_finds_the_same_alerts_the_sensor_raised(scene):
    found_live = _tick(scene, _at(2, 45)).alerts
    # the daily run's as_of: the day's end, over the same staged rows (the same SQL reads them)
    with duckdb.connect(str(live_path(scene.warehouse))) as con:
        con.execute("CREATE OR REPLACE TABLE marts.fct_node_hourly AS SELECT * FROM marts.fct_node_hourly WHERE FALSE")
        found_daily = detect(con, load_config(scene.config_path), _at(24))
    assert set(found_live["alert_id"]) == set(found_daily["alert_id"])
    # the 20-minute lull of job 102 is no hung job; a 60-minute stretch is critical only from 4 × 30 minutes
    assert sorted(found_daily["subject"]) == ["c1/101", "r1"]


def test_the_cli_raises_by_hand_for_cron(scene, capsys):
    code = main(["alerts", "--live", "--as-of", "2026-11-02T01:40:00", "--landing", str(scene.landing),
                 "--config", str(scene.config_path), "--warehouse", str(scene.warehouse)])
    assert code == 0
    out = capsys.readouterr().out
    assert "raised 1 hung_job" in out and "job 101" in out


def test_the_sensor_ticks_as_of_now_into_the_configured_warehouse(scene, monkeypatch):
    import dagster as dg

    from pipelines.defs.alerts.live import live_alerts_sensor
    from pipelines.lib.dagster_glue.resources import LandingZone

    monkeypatch.setenv("GPULEDGER_WAREHOUSE", str(scene.warehouse))
    assert live_alerts_sensor.minimum_interval_seconds == 5 * 60
    context = dg.build_sensor_context(resources={"landing": LandingZone(root=str(scene.landing),
                                                                          config_file=str(scene.config_path))})
    result = live_alerts_sensor(context)
    # now is long after the scene's day: nothing to raise, but the tick staged the files and says so
    assert isinstance(result, dg.SkipReason) and "landing files read, raised nothing new" in result.skip_message
    assert live_path(scene.warehouse).exists()
