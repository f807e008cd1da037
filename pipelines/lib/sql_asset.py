"""The daily assets that are one SQL table each: the ledger's intermediate tables and the marts."""

from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.partitions import daily_duckdb_asset
from pipelines.lib.resources import LandingZone
from pipelines.lib.warehouse import bootstrap, write_day


def sql_asset(
    table: str,
    *,
    deps: list[str],
    group: str,
    description: str,
    prepare: tuple[str, ...] = (),
    finish: tuple[str, ...] = (),
) -> dg.AssetsDefinition:
    """A daily asset `<schema>/<table>` whose partition is written by sql/<schema>/<table>.sql as
    DELETE + INSERT of the day in one transaction (after the `prepare` scripts, in that transaction).
    `deps` are asset keys as "schema/table" strings."""

    @daily_duckdb_asset(table, group=group, description=description, deps=tuple(deps))
    def _asset(context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> dg.MaterializeResult:
        params = {"day": date.fromisoformat(context.partition_key), **landing.org_config().sql_params()}
        with duckdb.get_connection() as con:
            bootstrap(con)
            rows = write_day(con, table, params, prepare, finish)
        return dg.MaterializeResult(metadata={"rows": rows})

    return _asset
