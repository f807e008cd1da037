"""`gpuledger run`: daily partitions materialized through Dagster, recorded in DAGSTER_HOME's instance
so the UI shows them, with a progress bar and a closing summary.

Each run is tagged with its process, and runs earlier processes left unfinished because they were
killed are marked failed first (pipelines/lib/dead_runs.py). A run stopped by SIGTERM or SIGINT —
while it waits for another process's hold on the warehouse, or while it writes — ends the whole
command: the days after it are not started."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date

import dagster as dg
from tqdm import tqdm

from pipelines.lib.dead_runs import process_tags, reap_dead_runs
from pipelines.lib.ledger_days import PENDING_DAYS_ENV, mark_live_day

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


@dataclass
class RunInterrupted(Exception):
    """A signal stopped the command during a day's run; `not_run` are the days after it, not started."""

    day: date
    run_id: str
    finished: bool  # the day's run completed anyway (the signal came between its steps)
    signum: int | None
    not_run: list[date]

    def __str__(self) -> str:
        by = signal.Signals(self.signum).name if self.signum else "an interrupt"
        what = "after it finished" if self.finished else "before it finished"
        rest = "; not run: " + (f"{self.not_run[0]} to {self.not_run[-1]}" if len(self.not_run) > 1
                                else str(self.not_run[0])) if self.not_run else ""
        return f"stopped by {by} during {self.day}, {what} (run {self.run_id}){rest}"


@contextmanager
def _signals_seen() -> Iterator[Callable[[], list[int]]]:
    """Which of SIGTERM and SIGINT have arrived, whoever handled them: Dagster swaps their handlers
    while it executes, and one arriving between two steps is only noted, then forgotten when the run
    ends. The wakeup file descriptor receives every signal number, whatever the handler."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: []
        return
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    seen: list[int] = []

    def received() -> list[int]:
        try:
            while chunk := os.read(read_end, 64):
                seen.extend(s for s in chunk if s in (signal.SIGTERM, signal.SIGINT))
        except BlockingIOError:
            pass
        return seen

    try:
        yield received
    finally:
        signal.set_wakeup_fd(previous)
        os.close(read_end)
        os.close(write_end)


def materialize_days(
    days: list[date], instance: dg.DagsterInstance | None = None, progress: bool = True
) -> list[tuple[date, list[str]]]:
    """Runs the `daily_ledger` job for each day, in order; returns the days that failed, with why.
    Resources come from the environment (GPULEDGER_LANDING, _WAREHOUSE, _CONFIG) at load.
    Raises RunInterrupted when a signal stops a day's run."""
    from pipelines.definitions import defs

    job = defs().resolve_job_def("daily_ledger")
    failed: list[tuple[date, list[str]]] = []
    owned = instance is None
    instance = instance or dg.DagsterInstance.get()
    try:
        for run_id in reap_dead_runs(instance):
            print(f"run {run_id} was left unfinished by a process that is gone (killed): marked it failed",
                  file=sys.stderr)
        tags = process_tags()
        bar = tqdm(days, desc="daily_ledger", unit="day", file=sys.stderr, disable=not progress)
        with _signals_seen() as received:
            for i, day in enumerate(bar):
                bar.set_postfix_str(day.isoformat())
                # Until its publish step says `succeeded`, the day's books are not whole: each step that
                # rewrites a day's table marks it `running` first (pipelines/engines/sql_asset.py), so a
                # run that fails or is killed leaves it so, never published as complete.
                os.environ[PENDING_DAYS_ENV] = ",".join(d.isoformat() for d in days[i + 1:])
                try:
                    result = job.execute_in_process(
                        partition_key=day.isoformat(), instance=instance, raise_on_error=False, run_config=QUIET,
                        tags=tags,
                    )
                finally:
                    os.environ.pop(PENDING_DAYS_ENV, None)
                signals = received()
                if signals or _interrupted(result):
                    bar.close()
                    raise RunInterrupted(day, result.run_id, result.success, signals[-1] if signals else None,
                                         days[i + 1:])
                if not result.success:
                    failed.append((day, _failures(result)))
                    _publish_failed_day(day, result.run_id, failed[-1][1])
    finally:
        if owned:
            instance.dispose()
    return failed


def _publish_failed_day(day: date, run_id: str, reasons: list[str]) -> None:
    """Marks the day failed, with why, and publishes again when there is a published file, so readers
    see the day incomplete (finance.reconciliation_daily) rather than a half-written day as whole.
    A publish that cannot happen (disk full, days lost) leaves the published file as it was."""
    from pipelines.lib.config import load_config
    from pipelines.lib.warehouse.publish import create_finance_views, publish, published_path
    from pipelines.lib.dagster_glue.resources import warehouse_resource

    try:
        mark_live_day(day, "failed", run_id, "; ".join(reasons))
        if not published_path().exists():
            return
        cfg = load_config(os.environ.get("GPULEDGER_CONFIG") or None)
        with warehouse_resource().get_connection() as con:
            create_finance_views(con, cfg)
            publish(con, cfg)
    except Exception as err:  # the day stays marked unfinished (`running`); the published file as it was
        print(f"{day} failed and could not be recorded or published as incomplete ({err}): the published "
              "file is as it was before this day ran", file=sys.stderr)


def _interrupted(result: dg.ExecuteInProcessResult) -> bool:
    """Whether SIGTERM / SIGINT stopped the run: Dagster turns them into this error inside a step."""
    return any(
        event.is_step_failure and event.step_failure_data.error
        and event.step_failure_data.error.cls_name == "DagsterExecutionInterruptedError"
        for event in result.all_events
    )


def _failures(result: dg.ExecuteInProcessResult) -> list[str]:
    """What stopped the day, each with what to do about it."""
    day = result.dagster_run.tags.get("dagster/partition", "the day")
    reasons = [
        f"check {ev.check_name} on {ev.asset_key.to_user_string()} did not pass ({_brief(ev.metadata)})"
        + _check_advice(ev.check_name, ev.asset_key.to_user_string(), ev.metadata, day)
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
            reasons.append(f"{event.step_key}: {error.message.strip()}" + _error_advice(error.message))
    return reasons or ["run failed"]


def _check_advice(check: str, asset: str, metadata: dict, day: str) -> str:
    value = lambda k: getattr(metadata.get(k), "value", metadata.get(k))  # noqa: E731
    if check.endswith("_contract"):
        share, limit = value("quarantined_share"), value("max_share")
        if share is not None and limit is not None and share > limit:
            return (f": {share:.1%} of the day's landing rows were quarantined, over the {limit:.0%} allowed; see "
                    "why with `gpuledger inspect` or ops.quarantine, fix those files, or raise quarantine.max_share "
                    "in the config if that share is expected")
        return ": rows that passed parsing break the staging contract; this is a gpuledger bug, please report it"
    if check == "expectations" and asset == "marts/fct_cost_daily" and value("rows") == 0:
        return (f": no bill and no rate card covers {day}, so the ledger has nothing to cost (its GPU-seconds are "
                "in marts.fct_job_cost); land the day's bill (see `gpuledger inspect`), or describe the fleet's "
                "rate cards, contracts or owned hardware under `costs:` in the config (docs/config.md#costs), "
                "and run the day again")
    if check == "conservation":
        return ": the ledger does not add up to the bill; this is a gpuledger bug, please report it with the day"
    return ""


def _error_advice(message: str) -> str:
    if "No space left on device" in message or "Errno 28" in message:
        return (": the disk holding the warehouse is full; free space and run the day again (nothing of the "
                "day was kept: each write is one transaction)")
    return ""


def _brief(metadata: dict) -> str:
    keep = ("quarantined_share", "max_share", "contract_violations", "difference_effective_cost", "difference_billed_cost",
            "failed", "rows")
    return ", ".join(f"{k}={getattr(metadata[k], 'value', metadata[k])}" for k in keep if k in metadata)
