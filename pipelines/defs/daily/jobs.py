import dagster as dg

from pipelines.defs.collect.assets import collecting_dcgm
from pipelines.defs.daily.freshness import ledger_freshness_checks
from pipelines.lib.partitions import DAILY

DAILY_LEDGER = "daily_ledger"


@dg.definitions
def daily_ledger_job() -> dg.Definitions:
    """Every daily asset and its data checks, staging to the published warehouse, in one partitioned
    job: a day is materialized as a unit. Freshness checks run from their own sensor. Collectors (group
    `collect`) pull from a cluster's own systems: they are in the job only when the config names the
    system, read each time the definitions load (so schedules and sensors refer to the job by name)."""
    selection = dg.AssetSelection.all() - dg.AssetSelection.checks(*ledger_freshness_checks)
    if not collecting_dcgm():
        selection = selection - dg.AssetSelection.groups("collect")
    return dg.Definitions(jobs=[dg.define_asset_job(
        name=DAILY_LEDGER,
        selection=selection,
        partitions_def=DAILY,
        description="Ingests the landing zone, builds the ledger and publishes it, for one UTC day.",
    )])
