"""Hung jobs, idle sessions and step-time regressions raised within the hour, not at the daily run
(docs/plans.md#alerts).

Every `alerts.live_interval_minutes` (default 5) the live sensor (pipelines/defs/alerts/live.py) stages the
newest landing files of today and the two days before — scheduler records, DCGM telemetry, trainer events —
into a scratch DuckDB beside the warehouse (`<warehouse>.live.duckdb`) with the very parsers and rollups the
daily run uses, read in place, each file only when it is new or has changed since the last tick
(ops.landed_files of the scratch file). It then runs
the detection queries (sql/alerts/hung_job.sql, step_time_regression.sql) with `as_of` = now and inserts
what they find into the warehouse's ops.alerts, under the warehouse's writer lock, through the daily
run's own merge (raising.py `raise_found`: open, update, resolve): the daily run later finds them there.
The money (cost per GPU-second of each node) comes from the warehouse's marts.fct_node_hourly, read under
the same lock. `gpuledger alerts --live [--as-of TS]` does one tick by hand (cron, tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import duckdb
import polars as pl

from pipelines.alerts.raising import LIVE_QUERIES, alert_rows, raise_found
from pipelines.landing.sync import sync
from pipelines.ingest.sources import DCGM, KUBERNETES, NVIDIA_SMI, RUNS, SLURM, TRAINER_LOGS
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import bootstrap, connect, has_table, transaction, warehouse_path
from pipelines.lib.warehouse.writer_lock import warehouse_lock

LIVE_SOURCES = (SLURM, KUBERNETES, DCGM, NVIDIA_SMI, RUNS, TRAINER_LOGS)  # a log being written is read again each tick
RATE_COLUMNS = {"day": pl.Date, "hostname": pl.String, "billing_currency": pl.String,
                "effective_cost": pl.Decimal(38, 18), "gpu_seconds": pl.Float64}


def live_path(warehouse: Path) -> Path:
    """The scratch file the sensor stages today's landing files into: `<warehouse>.live.duckdb`."""
    return warehouse.with_name(f"{warehouse.stem}.live.duckdb")


@dataclass
class LiveResult:
    as_of: datetime
    files_read: int
    raised: dict[str, int]
    alerts: pl.DataFrame          # what the queries found, raised now or before


def stage_live(con: duckdb.DuckDBPyConnection, root: Path, cfg: OrgConfig, day: date) -> int:
    """Brings `con` (a scratch warehouse) up to date with the landing files of `day`, the two days before
    and the day after (`day=` folders); returns how many files were read. Telemetry of older days is
    dropped: the queries look back 36 hours."""
    bootstrap(con)
    read = 0
    for source in LIVE_SOURCES:
        for around in (day - timedelta(days=1), day):   # each reads its own and its neighbours' folders
            read += len(sync(con, root, source, cfg, around).files_read)
    con.execute("DELETE FROM staging.stg_dcgm__gpu_minutes WHERE day < $first", {"first": day - timedelta(days=2)})
    return read


def detect(con: duckdb.DuckDBPyConnection, cfg: OrgConfig, as_of: datetime) -> pl.DataFrame:
    """The hung jobs and step-time regressions the staged data in `con` shows as of `as_of`, with their
    alert_id (marts.fct_node_hourly must be there, empty if need be)."""
    params = {"as_of": as_of, **cfg.sql_params()}
    frames = [alert_rows(con, query, params).pl() for query in LIVE_QUERIES]
    return pl.concat(frames, how="diagonal_relaxed")


def run_live(root: Path, cfg: OrgConfig, warehouse: Path | None = None, as_of: datetime | None = None,
             run_id: str | None = None) -> LiveResult:
    """One tick: stage the newest landing files, detect as of `as_of` (default: now, UTC, naive), insert
    the new alerts into the warehouse's ops.alerts."""
    warehouse = Path(warehouse or warehouse_path())
    as_of = as_of or datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    scratch = live_path(warehouse)
    scratch.parent.mkdir(parents=True, exist_ok=True)
    # the scratch file has a lock of its own: a cron tick and the sensor never stage it at once
    with warehouse_lock(scratch, run_id=run_id), duckdb.connect(str(scratch)) as live:
        files = stage_live(live, root, cfg, as_of.date())
        with warehouse_lock(warehouse, run_id=run_id):
            con = connect(warehouse)
            try:
                bootstrap(con)
                _copy_rates(con, live, as_of)
                found = detect(live, cfg, as_of)
                raised = _insert(con, found, as_of, cfg.alerts.severity)
            finally:
                con.close()
    return LiveResult(as_of, files, raised, found)


def _copy_rates(con: duckdb.DuckDBPyConnection, live: duckdb.DuckDBPyConnection, as_of: datetime) -> None:
    """The week of marts.fct_node_hourly the queries price GPU-seconds with, from the warehouse."""
    rates = pl.DataFrame(schema=RATE_COLUMNS)
    if has_table(con, "marts", "fct_node_hourly"):
        rates = con.sql(
            "SELECT day, hostname, billing_currency, effective_cost::DECIMAL(38, 18) AS effective_cost, "
            "gpu_seconds::DOUBLE AS gpu_seconds FROM marts.fct_node_hourly "
            "WHERE day BETWEEN $day - 7 AND $day - 1", params={"day": as_of.date()}).pl()
    live.register("rates_frame", rates)
    live.execute("CREATE OR REPLACE TABLE marts.fct_node_hourly AS SELECT * FROM rates_frame")
    live.unregister("rates_frame")


def _insert(con: duckdb.DuckDBPyConnection, found: pl.DataFrame, as_of: datetime,
            severity: dict[str, str]) -> dict[str, int]:
    raised_at = datetime.now(timezone.utc).replace(tzinfo=None)
    with transaction(con):
        con.register("found_alerts", found)
        try:
            return raise_found(con, "found_alerts", LIVE_QUERIES, as_of.date(), as_of, raised_at, severity)
        finally:
            con.unregister("found_alerts")
