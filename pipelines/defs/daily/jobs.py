import dagster as dg

from pipelines.defs.collect.assets import COLLECT_DCGM, collecting_dcgm
from pipelines.defs.daily.freshness import ledger_freshness_checks
from pipelines.lib.dagster_glue.partitions import DAILY

DAILY_LEDGER = "daily_ledger"


@dg.definitions
def daily_ledger_job() -> dg.Definitions:
    """Every daily asset and its data checks, staging to the published warehouse, in one partitioned
    job: a day is materialized as a unit. Freshness checks run from their own sensor. Collectors (group
    `collect`) pull from a cluster's own systems on their own schedules; the day's DCGM collect joins
    the job when the config names a Prometheus server, read each time the definitions load (so
    schedules and sensors refer to the job by name)."""
    selection = (dg.AssetSelection.all() - dg.AssetSelection.checks(*ledger_freshness_checks)
                 - dg.AssetSelection.groups("collect"))
    if collecting_dcgm():
        selection = selection | dg.AssetSelection.assets(COLLECT_DCGM.split("/"))
    return dg.Definitions(jobs=[dg.define_asset_job(
        name=DAILY_LEDGER,
        selection=selection,
        partitions_def=DAILY,
        description="Ingests the landing zone, builds the ledger and publishes it, for one UTC day.",
    )])
