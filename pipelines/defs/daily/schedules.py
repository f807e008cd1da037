from datetime import timedelta

import dagster as dg

from pipelines.defs.daily.jobs import daily_ledger_job


@dg.schedule(cron_schedule="0 6 * * *", job=daily_ledger_job, execution_timezone="UTC")
def daily_ledger_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """06:00 UTC, for yesterday's partition: a full day of bills and telemetry has landed by then."""
    yesterday = (context.scheduled_execution_time - timedelta(days=1)).date().isoformat()
    return dg.RunRequest(run_key=f"daily-{yesterday}", partition_key=yesterday)
