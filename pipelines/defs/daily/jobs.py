import dagster as dg

from pipelines.lib.partitions import DAILY

# Every daily asset, staging to marts, in one partitioned job: a day is materialized as a unit.
daily_ledger_job = dg.define_asset_job(
    name="daily_ledger",
    selection=dg.AssetSelection.all(),
    partitions_def=DAILY,
    description="Ingests the landing zone and builds the ledger for one UTC day.",
)
