"""`gpuledger run`: daily partitions materialized through Dagster, recorded in DAGSTER_HOME's instance
so the UI shows them, with a progress bar and a closing summary."""

from __future__ import annotations

import sys
from datetime import date

import dagster as dg
from tqdm import tqdm

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def materialize_days(
    days: list[date], instance: dg.DagsterInstance | None = None, progress: bool = True
) -> list[tuple[date, list[str]]]:
    """Runs the `daily_ledger` job for each day, in order; returns the days that failed, with why.
    Resources come from the environment (GPULEDGER_LANDING, _WAREHOUSE, _CONFIG) at load."""
    from pipelines.definitions import defs

    job = defs().resolve_job_def("daily_ledger")
    failed: list[tuple[date, list[str]]] = []
    owned = instance is None
    instance = instance or dg.DagsterInstance.get()
    try:
        bar = tqdm(days, desc="daily_ledger", unit="day", file=sys.stderr, disable=not progress)
        for day in bar:
            bar.set_postfix_str(day.isoformat())
            result = job.execute_in_process(
                partition_key=day.isoformat(), instance=instance, raise_on_error=False, run_config=QUIET
            )
            if not result.success:
                failed.append((day, _failures(result)))
    finally:
        if owned:
            instance.dispose()
    return failed


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
    keep = ("quarantined_share", "max_share", "contract_violations", "difference_effective_cost", "difference_billed_cost",
            "failed", "rows")
    return ", ".join(f"{k}={getattr(metadata[k], 'value', metadata[k])}" for k in keep if k in metadata)
