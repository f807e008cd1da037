from datetime import datetime, timezone

import dagster as dg

from pipelines.defs.daily.jobs import DAILY_LEDGER
from pipelines.ingest.sources import BILLS
from pipelines.lib.dagster_glue.partitions import DAILY
from pipelines.lib.dagster_glue.resources import LandingZone
from pipelines.landing.restatements import bill_days_to_rerun


@dg.sensor(job_name=DAILY_LEDGER, minimum_interval_seconds=300, default_status=dg.DefaultSensorStatus.RUNNING)
def restated_bills_sensor(context: dg.SensorEvaluationContext, landing: LandingZone) -> dg.SensorResult:
    """Re-runs exactly the days whose bill changed: a new delivery's new or restated days, a removed
    file's days, the days a superseded or copied file no longer counts twice on. Compares the landing
    zone, with the delivery rule applied, to ops.landed_files of the published warehouse, so it never
    waits on the writer."""
    changes = [c for source in BILLS for c in bill_days_to_rerun(landing.path, source, landing.org_config())]
    # only days that are partitions: complete UTC days since the partitioning starts
    valid = set(DAILY.get_partition_keys(current_time=datetime.now(timezone.utc)))
    requests = [
        dg.RunRequest(run_key=f"bills-{change.key}-{change.day}", partition_key=change.day.isoformat(),
                      tags={"gpuledger/reason": _reason(change.files)})
        for change in changes
        if change.day.isoformat() in valid
    ]
    return dg.SensorResult(run_requests=requests, skip_reason=None if requests else "no bill file changed")


def _reason(files: tuple[str, ...]) -> str:
    if not files:
        return "bill deliveries changed"
    more = f" and {len(files) - 1} more" if len(files) > 1 else ""
    return f"bill file {files[0]}{more}"
