from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.engines.sql_asset import sql_asset
from pipelines.ingest.sources import STORAGE
from pipelines.ingest.staging_asset import staging_asset
from pipelines.lib.config.storage import rule_macros
from pipelines.lib.ledger_days import mark_day
from pipelines.lib.dagster_glue.partitions import daily_duckdb_asset
from pipelines.lib.dagster_glue.resources import LandingZone
from pipelines.lib.warehouse.sql_lineage import tables_read
from pipelines.lib.warehouse import bootstrap, write_day

stg_storage__objects = staging_asset(
    STORAGE,
    description="""Storage inventories under `inventory/storage/`: S3 Inventory deliveries (manifest.json and
its CSV, Parquet or ORC files) and POSIX listings, one snapshot per store and day. A newer delivery of a
store's day replaces the older; one whose files have not all landed leaves the older current.""",
)

OBJECTS = "intermediate/int_storage_objects"


@daily_duckdb_asset(OBJECTS, group="storage", deps=tuple(sorted(tables_read(OBJECTS))), description="""Every
inventoried object of the day (its store's latest snapshot), classified by the `storage.rules` of the
config: kind (checkpoint, dataset, log, other), run and step from the pattern's captures, project from the
rule or the run. One row per object and day: what tiering and pruning can act on.""")
def int_storage_objects(context: dg.AssetExecutionContext, duckdb: DuckDBResource,
                        landing: LandingZone) -> dg.MaterializeResult:
    # Always on DuckDB: the rules' patterns are compiled into this connection's macros, as constants
    # (a pattern per row is a hundred times slower on tens of millions of objects).
    cfg = landing.org_config()
    params = {"day": date.fromisoformat(context.partition_key), **cfg.sql_params()}
    with duckdb.get_connection() as con:
        bootstrap(con)
        mark_day(con, params["day"], "running")
        for statement in rule_macros(cfg.storage):
            con.execute(statement)
        rows = write_day(con, OBJECTS, params)
    return dg.MaterializeResult(metadata={"rows": rows, "engine": "duckdb"})


int_storage_costs = sql_asset(
    "intermediate/int_storage_costs",
    group="storage",
    description="""What inventoried storage costs per day, store, tier, project, run and kind: each storage
bill line of a store with an inventory split exactly over the store's objects by bytes (its tier's, when
the line names one), else the config's storage rate card, else unpriced. The ledger places those lines by
these pieces.""",
)

fct_storage_daily = sql_asset(
    "marts/fct_storage_daily",
    group="storage",
    description="""Storage per day × store × project × run × kind × tier × currency and what priced it (bill,
rate_card, unpriced): objects, bytes, GiB-days, EffectiveCost and BilledCost. Bill-priced rows of a store
sum exactly to its storage lines.""",
)
