"""The one partitioning every daily asset shares: UTC calendar days."""

import dagster as dg

DAILY = dg.DailyPartitionsDefinition(start_date="2020-01-01", timezone="UTC")


def daily_duckdb_asset(table: str, *, group: str, description: str, deps: tuple[str, ...] = ()):
    """The decorator every daily warehouse table uses: key `<schema>/<table>` from "schema/table" and
    the shared daily partitions. One writer at a time is the warehouse resource's lock, not a Dagster
    pool: a pool's claim outlives a killed process (see pipelines/lib/writer_lock.py)."""
    return dg.asset(
        key=table.split("/"),
        deps=[dg.AssetKey(d.split("/")) for d in deps],
        partitions_def=DAILY,
        group_name=group,
        kinds={"duckdb"},
        description=description,
    )
