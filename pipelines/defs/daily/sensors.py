from datetime import datetime, timezone

import dagster as dg

from pipelines.defs.daily.jobs import daily_ledger_job
from pipelines.ingest.sources import BILLS
from pipelines.lib.partitions import DAILY
from pipelines.lib.resources import LandingZone
from pipelines.lib.restatements import days_to_rerun


@dg.sensor(job=daily_ledger_job, minimum_interval_seconds=300, default_status=dg.DefaultSensorStatus.RUNNING)
def restated_bills_sensor(context: dg.SensorEvaluationContext, landing: LandingZone) -> dg.SensorResult:
    """A bill file re-delivered with new content (a restatement) or newly landed re-runs exactly the
    days it touches: those its earlier version covered and those the new one covers. Compares the
    landing zone with ops.landed_files of the published warehouse, so it never waits on the writer."""
    changes = [c for source in BILLS for c in days_to_rerun(landing.path, source, landing.org_config())]
    # only days that are partitions: complete UTC days since the partitioning starts
    valid = set(DAILY.get_partition_keys(current_time=datetime.now(timezone.utc)))
    requests = [
        dg.RunRequest(run_key=f"bills-{change.sha256[:16]}-{day}", partition_key=day.isoformat(),
                      tags={"gpuledger/reason": f"bill file {change.file}"})
        for change in changes
        for day in sorted(change.days)
        if day.isoformat() in valid
    ]
    return dg.SensorResult(run_requests=requests, skip_reason=None if requests else "no bill file changed")
