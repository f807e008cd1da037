from datetime import date, timedelta

import dagster as dg

from pipelines.defs.daily.jobs import DAILY_LEDGER

LATE_DATA_DAYS = 3  # telemetry and bills arrive up to this many days late


@dg.schedule(cron_schedule="0 6 * * *", job_name=DAILY_LEDGER, execution_timezone="UTC")
def daily_ledger_schedule(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
    """06:00 UTC: yesterday's partition, and the three days before it again, for bills, telemetry and
    job resumptions that landed late. Re-running a day is idempotent."""
    today = context.scheduled_execution_time.date()
    days = [today - timedelta(days=n) for n in range(1, LATE_DATA_DAYS + 2)]
    return [_request(d, f"daily-{today}") for d in days]


@dg.schedule(cron_schedule="0 7 3 * *", job_name=DAILY_LEDGER, execution_timezone="UTC")
def month_end_schedule(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
    """07:00 UTC on the 3rd: every day of the previous month again, once its bill is final (providers
    finalise a month's invoice in the first days of the next)."""
    first_of_this_month = context.scheduled_execution_time.date().replace(day=1)
    last = first_of_this_month - timedelta(days=1)
    days = [last.replace(day=d) for d in range(1, last.day + 1)]
    return [_request(d, f"month-end-{last:%Y-%m}") for d in days]


def _request(day: date, reason: str) -> dg.RunRequest:
    return dg.RunRequest(run_key=f"{reason}-{day}", partition_key=day.isoformat(), tags={"gpuledger/reason": reason})
