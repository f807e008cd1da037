"""The daily schedule, the month-end re-finalisation and the restated-bill sensor."""

import shutil
from datetime import date, datetime, timezone

import dagster as dg
import pytest

from pipelines.definitions import defs
from tests.support.bill_truth import current_bill_files
from tests.support.pipeline import LedgerRun, pipeline_env, run_pipeline, simulate_and_run


def _tick(name, when):
    d = defs()
    schedule = d.resolve_schedule_def(name)
    ctx = dg.build_schedule_context(scheduled_execution_time=when, repository_def=d.get_repository_def())
    return [r.partition_key for r in schedule.evaluate_tick(ctx).run_requests]


def test_daily_tick_runs_yesterday_and_the_three_days_before():
    assert _tick("daily_ledger_schedule", datetime(2026, 11, 29, 6, tzinfo=timezone.utc)) == [
        "2026-11-28", "2026-11-27", "2026-11-26", "2026-11-25"]


def test_month_end_tick_runs_every_day_of_the_previous_month():
    keys = _tick("month_end_schedule", datetime(2026, 12, 3, 7, tzinfo=timezone.utc))
    assert keys == [f"2026-11-{d:02d}" for d in range(1, 31)]
    assert _tick("month_end_schedule", datetime(2026, 3, 3, 7, tzinfo=timezone.utc))[-1] == "2026-02-28"


@pytest.fixture(scope="module")
def landed(tmp_path_factory):
    return simulate_and_run(tmp_path_factory.mktemp("restated"), date(2026, 11, 2), 3, 2, seed=4)


@pytest.fixture
def restatable(landed, tmp_path):
    """A copy of the module's world (landing, config, warehouse) for one test to restate a bill in and
    re-run: the module's world stays as the fixture made it without running the restated days back (a
    copy is a second; two days run again, a quarter of a minute)."""
    root = tmp_path / "world"
    shutil.copytree(landed.root, root, ignore=shutil.ignore_patterns("*.lock"))
    return LedgerRun(root, root / "landing", root / "warehouse.duckdb", root / "gpuledger.yaml", landed.days)


def _sensor_days(run):
    d = defs()
    with pipeline_env(run.landing, run.warehouse, run.config):
        sensor = d.resolve_sensor_def("restated_bills_sensor")
        from pipelines.lib.dagster_glue.resources import landing_resource

        ctx = dg.build_sensor_context(resources={"landing": landing_resource()}, repository_def=d.get_repository_def())
        result = sensor(ctx)
    return sorted({r.partition_key for r in result.run_requests})


def test_unchanged_bills_trigger_nothing(landed):
    assert _sensor_days(landed) == []


@pytest.mark.parametrize("export", ["gpuledger-focus", "kestrel-focus"])   # AWS's USD bill, the GPU cloud's EUR one
def test_a_restated_bill_file_triggers_exactly_its_days(restatable, export):
    # the export's latest month-to-date delivery of November
    (bill,) = [p for p in current_bill_files(restatable.landing) if f"/bills/focus/{export}/" in p.as_posix()]
    lines = bill.read_text().splitlines(keepends=True)
    start = lines[0].split(",").index("ChargePeriodStart")
    # restate: every line that starts on Nov 3 moved to Nov 4 — its old day and its new day re-run; the
    # lines of other days, the multi-day storage line and the monthly fee among them, stay as they are
    moved = [l.replace("2026-11-03T", "2026-11-04T") if l.split(",")[start].startswith("2026-11-03T") else l
             for l in lines]
    assert moved != lines, "the bill has lines starting on Nov 3 to restate"
    assert _sensor_days(restatable) == [], "the copied world is as quiet as the module's"
    bill.write_text("".join(moved))
    assert _sensor_days(restatable) == ["2026-11-03", "2026-11-04"]
    # once those days are re-run the sensor is quiet again
    assert not run_pipeline(restatable.landing, restatable.warehouse, restatable.config,
                            [date(2026, 11, 3), date(2026, 11, 4)])
    assert _sensor_days(restatable) == []
