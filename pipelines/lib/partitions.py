"""The one partitioning every daily asset shares: UTC calendar days."""

import dagster as dg

DAILY = dg.DailyPartitionsDefinition(start_date="2020-01-01", timezone="UTC")


def daily_duckdb_asset(table: str, *, group: str, description: str, deps: tuple[str, ...] = ()):
    """The decorator every daily warehouse table uses: key `<schema>/<table>` from "schema/table",
    the shared daily partitions, and the DuckDB writer pool (one writer per file)."""
    from pipelines.lib.warehouse import WRITER_POOL

    return dg.asset(
        key=table.split("/"),
        deps=[dg.AssetKey(d.split("/")) for d in deps],
        partitions_def=DAILY,
        pool=WRITER_POOL,
        group_name=group,
        kinds={"duckdb"},
        description=description,
    )
