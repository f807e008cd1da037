from datetime import datetime, timezone

import dagster as dg

from pipelines.definitions import defs
from pipelines.lib.warehouse import WRITER_POOL


def test_code_location_loads():
    d = defs()
    dg.Definitions.validate_loadable(d)
    keys = {k.to_user_string() for k in d.resolve_asset_graph().get_all_asset_keys()}
    assert {
        "staging/stg_focus__bill_lines",
        "staging/stg_slurm__job_records",
        "staging/stg_dcgm__gpu_minutes",
        "staging/stg_runs__events",
        "staging/stg_inventory__nodes",
    } <= keys


def test_every_asset_is_daily_and_in_the_writer_pool():
    assets = list(defs().assets)
    assert assets
    for asset in assets:
        assert asset.partitions_def is not None and asset.partitions_def.get_first_partition_key() == "2024-01-01"
        assert asset.op.pool == WRITER_POOL, asset.key


def test_every_staging_asset_has_a_blocking_contract_check():
    d = defs()
    checks = {c.asset_key.to_user_string(): c for c in d.resolve_asset_graph().asset_check_keys}
    specs = [spec for checks_def in d.asset_checks or [] for spec in checks_def.check_specs]
    assert all(spec.blocking for spec in specs)
    checked = {s.asset_key.to_user_string() for s in specs}
    assert {k for k in checks if k.startswith("staging/")} <= checked
    assert "marts/fct_cost_daily" in checked  # conservation


def test_the_schedule_runs_yesterday_at_six_utc():
    d = defs()
    schedule = d.resolve_schedule_def("daily_ledger_schedule")
    assert schedule.cron_schedule == "0 6 * * *"
    ctx = dg.build_schedule_context(
        scheduled_execution_time=datetime(2026, 11, 29, 6, 0, tzinfo=timezone.utc),
        repository_def=d.get_repository_def(),
    )
    requests = list(schedule.evaluate_tick(ctx).run_requests)
    assert [r.partition_key for r in requests] == ["2026-11-28"]
