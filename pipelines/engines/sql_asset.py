"""The daily assets that are one SQL table each: the ledger's intermediate tables and the marts, computed
by the engine the config names (`engine: duckdb | spark`, or `gpuledger run --engine`): the same asset,
the same SQL file, either way (docs/spark.md#running-on-spark)."""

from datetime import date

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from pipelines.lib.config import OrgConfig, engine_of
from pipelines.lib.ledger_days import mark_day
from pipelines.lib.dagster_glue.partitions import daily_duckdb_asset
from pipelines.lib.dagster_glue.resources import LandingZone
from pipelines.lib.warehouse.sql_lineage import tables_read
from pipelines.lib.warehouse import bootstrap
from pipelines.lib.warehouse import write_day as write_day_on_duckdb

def write_day(warehouse: DuckDBResource, table: str, params: dict[str, object], cfg: OrgConfig) -> dict:
    """Writes day params["day"] of `table` ("schema/name") with the configured engine; returns the
    asset's metadata: its rows, the engine, on Spark when Spark's work started and ended. On DuckDB the
    whole write holds the warehouse's writer lock; on Spark only the parts that touch the DuckDB file
    do (pipelines/engines/spark/daily.py)."""
    if engine_of(cfg) == "spark":
        from pipelines.engines.spark import daily

        with warehouse.get_connection() as con:
            bootstrap(con)
            _day_in_progress(con, params)
            daily.prepare(con, table, cfg)
        computed = daily.compute(table, params, cfg)
        with warehouse.get_connection() as con:
            rows = daily.finish(con, computed, params)
        return {"rows": rows, "engine": "spark", "spark_began": dg.MetadataValue.timestamp(computed.began),
                "spark_ended": dg.MetadataValue.timestamp(computed.ended)}
    with warehouse.get_connection() as con:
        bootstrap(con)
        _day_in_progress(con, params)
        _table_again(con, table)
        return {"rows": write_day_on_duckdb(con, table, params), "engine": "duckdb"}


def _day_in_progress(con: duckdb.DuckDBPyConnection, params: dict[str, object]) -> None:
    """The day's books are being rewritten: until its publish step marks it `succeeded`, a run that
    stops here, however it was started, leaves it incomplete (ops.ledger_days)."""
    mark_day(con, params["day"], "running")


def _table_again(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """A warehouse a Spark run wrote holds the table as a view over Parquet: back on DuckDB, its rows
    become a table again, so the days Spark wrote stay."""
    schema, name = table.split("/")
    is_view = con.execute("SELECT count(*) FROM duckdb_views() WHERE database_name = current_database() "
                          "AND schema_name = $s AND view_name = $t", {"s": schema, "t": name}).fetchall()[0][0]
    if is_view:
        qualified = f"{schema}.{name}"  # a constant of the asset, never input
        con.execute(f"CREATE TABLE {schema}.{name}__from_spark AS SELECT * FROM {qualified}")
        con.execute(f"DROP VIEW {qualified}")
        con.execute(f"ALTER TABLE {schema}.{name}__from_spark RENAME TO {name}")


def sql_asset(table: str, *, group: str, description: str) -> dg.AssetsDefinition:
    """A daily asset `<schema>/<table>` whose partition is written by its SQL (`warehouse.table_sql`):
    on DuckDB as DELETE + INSERT of the day in one transaction, on Spark as the day's Parquet partition
    (then a view of the warehouse).
    Its dependencies are the tables that SQL reads."""

    @daily_duckdb_asset(table, group=group, description=description, deps=tuple(sorted(tables_read(table))))
    def _asset(context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> dg.MaterializeResult:
        cfg = landing.org_config()
        params = {"day": date.fromisoformat(context.partition_key), **cfg.sql_params()}
        return dg.MaterializeResult(metadata=write_day(duckdb, table, params, cfg))

    return _asset
