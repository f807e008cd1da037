"""The daily assets that are one SQL table each: the ledger's intermediate tables and the marts."""

from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.partitions import daily_duckdb_asset
from pipelines.lib.resources import LandingZone
from pipelines.lib.sql_lineage import tables_read
from pipelines.lib.warehouse import bootstrap, write_day


def sql_asset(table: str, *, group: str, description: str) -> dg.AssetsDefinition:
    """A daily asset `<schema>/<table>` whose partition is written by its SQL (`warehouse.table_sql`)
    as DELETE + INSERT of the day in one transaction. Its dependencies are the tables that SQL reads."""

    @daily_duckdb_asset(table, group=group, description=description, deps=tuple(sorted(tables_read(table))))
    def _asset(context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> dg.MaterializeResult:
        params = {"day": date.fromisoformat(context.partition_key), **landing.org_config().sql_params()}
        with duckdb.get_connection() as con:
            bootstrap(con)
            rows = write_day(con, table, params)
        return dg.MaterializeResult(metadata={"rows": rows})

    return _asset
