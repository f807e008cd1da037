"""`gpuledger run`: daily partitions materialized through Dagster, recorded in DAGSTER_HOME's instance
so the UI shows them, with a progress bar and a closing summary of what landed."""

from __future__ import annotations

import sys
from datetime import date

import dagster as dg
from tqdm import tqdm

from pipelines.lib.resources import warehouse_resource
from pipelines.lib.warehouse import warehouse_path

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def materialize_days(days: list[date]) -> int:
    from pipelines.definitions import defs

    job = defs().resolve_job_def("daily_ledger")
    failed: list[tuple[date, list[str]]] = []
    with dg.DagsterInstance.get() as instance:
        bar = tqdm(days, desc="daily_ledger", unit="day", file=sys.stderr)
        for day in bar:
            bar.set_postfix_str(day.isoformat())
            result = job.execute_in_process(
                partition_key=day.isoformat(), instance=instance, raise_on_error=False, run_config=QUIET
            )
            if not result.success:
                failed.append((day, _failures(result)))
    print_summary()
    for day, reasons in failed:
        print(f"FAILED {day}: " + "; ".join(reasons), file=sys.stderr)
    if failed:
        print("Fix the input named above (or raise quarantine.max_share in the config) and re-run those days.",
              file=sys.stderr)
    return 1 if failed else 0


def _failures(result: dg.ExecuteInProcessResult) -> list[str]:
    reasons = [
        f"check {ev.check_name} on {ev.asset_key.to_user_string()} did not pass ({_brief(ev.metadata)})"
        for ev in result.get_asset_check_evaluations()
        if not ev.passed
    ]
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data.error:
            error = event.step_failure_data.error
            if error.cls_name == "DagsterAssetCheckFailedError":
                continue  # already named above, with its figures
            while error.cause is not None:  # Dagster wraps the asset's own exception: show that one
                error = error.cause
            reasons.append(f"{event.step_key}: {error.message.strip()}")
    return reasons or ["run failed"]


def _brief(metadata: dict) -> str:
    keep = ("quarantined_share", "max_share", "contract_violations")
    return ", ".join(f"{k}={getattr(metadata[k], 'value', metadata[k])}" for k in keep if k in metadata)


def print_summary() -> None:
    # The same resource (and so the same DuckDB configuration) the assets used in this process.
    with warehouse_resource().get_connection() as con:
        rows = con.execute(
            """SELECT source, count(*) AS files, sum(rows_staged) AS accepted, sum(rows_quarantined) AS quarantined,
                      min(first_day) AS first_day, max(last_day) AS last_day
               FROM ops.landed_files GROUP BY source ORDER BY source"""
        ).fetchall()
    print(f"\nwarehouse {warehouse_path()}")
    print(f"  {'source':<10} {'files':>6} {'rows in':>12} {'quarantined':>12}  coverage")
    for source, files, accepted, quarantined, first, last in rows:
        print(f"  {source:<10} {files:>6} {accepted:>12,} {quarantined:>12,}  {first or '':} … {last or ''}")
