import os

import dagster as dg

from pipelines.lib.config import load_config

# Yesterday's ledger must be published by 09:00 UTC: three hours after the daily tick. Evaluated by
# their own sensor, not inside the daily job (a backfill of old days says nothing about yesterday).
ledger_freshness_checks = dg.build_time_partition_freshness_checks(
    assets=[dg.AssetKey(["marts", "fct_cost_daily"]), dg.AssetKey(["ops", "published_warehouse"])],
    deadline_cron="0 9 * * *",
    timezone="UTC",
)
ledger_freshness_sensor = dg.build_sensor_for_freshness_checks(
    freshness_checks=ledger_freshness_checks,
    name="ledger_freshness_sensor",
    # `ledger.freshness_checks: false` (the demo's config): stopped until turned on in the UI
    default_status=(dg.DefaultSensorStatus.RUNNING
                    if load_config(os.environ.get("GPULEDGER_CONFIG") or None).ledger.freshness_checks
                    else dg.DefaultSensorStatus.STOPPED),
)
