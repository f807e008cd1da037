"""The one partitioning every daily asset shares: UTC calendar days from the ledger's first day.

The first day is `$GPULEDGER_LEDGER_START` when the definitions load: `gpuledger run` and the code
location (pipelines/definitions.py) set it from the config's `ledger.start`, else from the earliest day
the landing files cover. Without either (an empty landing zone) the partitions start on FALLBACK_START.
"""

import os
from datetime import date

import dagster as dg

from pipelines.lib.dagster_glue.resources import LEDGER_START_ENV

FALLBACK_START = date(2020, 1, 1)


def ledger_start() -> date:
    value = os.environ.get(LEDGER_START_ENV)
    return date.fromisoformat(value) if value else FALLBACK_START


DAILY = dg.DailyPartitionsDefinition(start_date=ledger_start().isoformat(), timezone="UTC")


def daily_duckdb_asset(table: str, *, group: str, description: str, deps: tuple[str, ...] = ()):
    """The decorator every daily warehouse table uses: key `<schema>/<table>` from "schema/table" and
    the shared daily partitions. One writer at a time is the warehouse resource's lock, not a Dagster
    pool: a pool's claim outlives a killed process (see pipelines/lib/warehouse/writer_lock.py)."""
    return dg.asset(
        key=table.split("/"),
        deps=[dg.AssetKey(d.split("/")) for d in deps],
        partitions_def=DAILY,
        group_name=group,
        kinds={"duckdb"},
        description=description,
    )
