import dagster as dg

from pipelines.defs.daily.freshness import ledger_freshness_checks
from pipelines.lib.partitions import DAILY

# Every daily asset and its data checks, staging to the published warehouse, in one partitioned job:
# a day is materialized as a unit. Freshness checks run from their own sensor; the collectors
# (group `collect`, pipelines/defs/collect/) fill the landing zone on their own schedules.
daily_ledger_job = dg.define_asset_job(
    name="daily_ledger",
    selection=dg.AssetSelection.all() - dg.AssetSelection.checks(*ledger_freshness_checks)
    - dg.AssetSelection.groups("collect"),
    partitions_def=DAILY,
    description="Ingests the landing zone, builds the ledger and publishes it, for one UTC day.",
)
