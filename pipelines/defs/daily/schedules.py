import dagster as dg

from pipelines.defs.daily.jobs import daily_ledger_job

# 06:00 UTC, for yesterday's partition: bills and telemetry of a full day have landed by then.
daily_ledger_schedule = dg.build_schedule_from_partitioned_job(
    daily_ledger_job, hour_of_day=6, minute_of_hour=0, name="daily_ledger_schedule"
)
