from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.storage.assets import fct_storage_daily, stg_storage__objects
from pipelines.ingest.sources import STORAGE
from pipelines.ingest.staging_asset import contract_check
from pipelines.lib.dagster_glue.partitions import DAILY
from pipelines.lib.warehouse import sql

storage_contract = contract_check(stg_storage__objects, STORAGE)


@dg.asset_check(asset=fct_storage_daily, blocking=True, partitions_def=DAILY)
def storage_conservation(context: dg.AssetCheckExecutionContext, duckdb: DuckDBResource) -> dg.AssetCheckResult:
    """Per store and currency, the day's bill-priced storage equals the store's storage lines exactly
    (EffectiveCost and BilledCost): splitting a line over its objects loses and makes no money."""
    day = date.fromisoformat(context.partition_key)
    with duckdb.get_connection() as con:
        rows = con.execute(sql("marts/checks/storage_conservation"), {"day": day}).fetchall()
    stores = {f"{store} {currency}": {"placed_effective_cost": str(pe), "lines_effective_cost": str(le),
                                      "placed_billed_cost": str(pb), "lines_billed_cost": str(lb)}
              for store, currency, pe, le, pb, lb in rows}
    passed = all(pe == le and pb == lb for _, _, pe, le, pb, lb in rows)
    return dg.AssetCheckResult(passed=passed, metadata={"stores": dg.MetadataValue.json(stores)})


@dg.asset_check(asset=fct_storage_daily, blocking=True, partitions_def=DAILY)
def storage_priced(context: dg.AssetCheckExecutionContext, duckdb: DuckDBResource) -> dg.AssetCheckResult:
    """Names every inventoried store (and tier) nothing prices — no bill line of the store, no storage
    rate card for the tier — with its objects and bytes, which are still counted. A warning, never a
    stop: unpriced storage moves no money (like every check of the daily job it is blocking, and it
    passes)."""
    day = date.fromisoformat(context.partition_key)
    with duckdb.get_connection() as con:
        rows = con.execute("""SELECT store, tier, sum(object_count), sum(bytes) FROM marts.fct_storage_daily
                              WHERE day = $day AND priced_by = 'unpriced' GROUP BY ALL ORDER BY ALL""",
                           {"day": day}).fetchall()
    unpriced = [{"store": s, "tier": t, "objects": int(n), "bytes": int(b)} for s, t, n, b in rows]
    if unpriced:
        context.log.warning(f"{len(unpriced)} inventoried store/tier(s) nothing prices, e.g. {unpriced[0]['store']} "
                            f"{unpriced[0]['tier']}: add bill lines for it or a storage.rate_card entry")
    return dg.AssetCheckResult(passed=True, metadata={"unpriced": dg.MetadataValue.json(unpriced),
                                                      "unpriced_stores": len({u["store"] for u in unpriced})})
