"""A ledger table's day computed by Spark, for the daily asset that `engine: spark` runs
(pipelines/engines/sql_asset.py), in three parts:

1. `prepare`, holding the warehouse's writer lock: what the table's SQL reads from DuckDB — the
   staging rows the parsers wrote, ops' landed files and quarantine, the reference catalogs — is
   copied to Parquet where it changed (mirror.py); a table a DuckDB run left is copied too, once, so
   its earlier days stay;
2. `compute`, without the lock, so the Spark work of several days' runs goes on at once: Spark runs
   the table's steps and writes the day under `<root>/<schema>/<table>/day=<day>/` (runner.SparkLedger);
3. `finish`, holding the lock: the warehouse's `<schema>.<table>` becomes a DuckDB view over that
   Parquet, so the checks, alerts, reports, the published file and finance SQL read it as they read a
   table; a step that only writes ops.* runs there, on DuckDB, whose bookkeeping ops is.

One SparkSession serves the process: the first day pays its start-up, the rest reuse it."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipelines.engines.spark.mirror import mirror
from pipelines.engines.spark.parquet import create_views
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse.reference import TABLES as REFERENCE_TABLES
from pipelines.lib.warehouse.sql_lineage import tables_named
from pipelines.lib.warehouse import run_sql, transaction, warehouse_path

log = logging.getLogger(__name__)
REFERENCE = tuple(t.replace(".", "/") for t in REFERENCE_TABLES)  # the macros read them too
_sessions: dict[tuple, object] = {}
session_start_seconds: dict[tuple, float] = {}  # how long each session took to start, for the bench


def spark_root(cfg: OrgConfig) -> Path:
    """`spark.root`, else `<warehouse>.spark/` beside the warehouse file."""
    if cfg.spark.root:
        return Path(cfg.spark.root).resolve()
    live = warehouse_path().resolve()
    return live.with_name(f"{live.stem}.spark")


def shared_session(cfg: OrgConfig):
    """The process's SparkSession for `spark.master` and `spark.conf`, started on first use."""
    from pipelines.engines.spark.runner import session

    key = (cfg.spark.master, tuple(sorted(cfg.spark.conf.items())))
    if key not in _sessions:
        began = time.perf_counter()
        spark = session(cfg.spark.master, conf=cfg.spark.conf)
        spark.sparkContext.setLogLevel("ERROR")
        session_start_seconds[key] = time.perf_counter() - began
        log.info("Spark session on %s started in %.1f s", cfg.spark.master, session_start_seconds[key])
        _sessions[key] = spark
    return _sessions[key]


def active_sessions() -> list:
    return list(_sessions.values())


def stop_sessions() -> None:
    """Stops the process's SparkSessions and the JVM they ran in (a test's teardown; a command's end
    stops them anyway). `SparkSession.stop` leaves pyspark's JVM running, 1.5 GB resident for the
    rest of a long process (a test worker's); the next session starts a new one."""
    for spark in _sessions.values():
        spark.stop()
    _sessions.clear()
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)  # set for a JVM pyspark launched, not for one it attached to
    try:
        gateway.shutdown()
    finally:
        SparkContext._gateway = None
        SparkContext._jvm = None
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except Exception:
                proc.kill()


@dataclass
class SparkDay:
    """A table's day computed on Spark, waiting for `finish` to make it the warehouse's."""

    table: str
    root: Path
    rows: int
    ops_steps: list[str]  # step files that only write ops.*, for DuckDB to run
    began: float          # when Spark's work started and ended (epoch seconds): shown by the asset
    ended: float


def prepare(con: duckdb.DuckDBPyConnection, table: str, cfg: OrgConfig) -> None:
    """Under the writer lock: the Parquet root recorded for readers, the table's inputs from DuckDB
    copied where they changed, and a table a DuckDB run left moved to Parquet."""
    root = spark_root(cfg)
    # readers of the warehouse (and of the file published from it) may read the Parquet there, nothing else
    con.execute("CREATE TABLE IF NOT EXISTS ops.parquet_roots (root VARCHAR PRIMARY KEY)")
    con.execute("INSERT OR IGNORE INTO ops.parquet_roots VALUES ($root)", {"root": str(root)})
    mirror(con, root, sorted({t for t in tables_named(table) if not is_spark_table(t)} | set(REFERENCE)))
    qualified = table.replace("/", ".")  # a constant of the asset, never input
    if _base_table(con, table):  # written by a DuckDB run before: its days move to Parquet first
        kept = con.execute(f"SELECT count(*) FROM {qualified}").fetchall()[0][0] > 0
        if kept:
            mirror(con, root, [table])
        with transaction(con):  # readers find the table or the view over its days, never neither
            con.execute(f"DROP TABLE {qualified}")
            if kept:
                create_views(con, root, [table])


def compute(table: str, params: dict[str, object], cfg: OrgConfig) -> SparkDay:
    """Without the writer lock (it touches Parquet only, so other days' runs go on meanwhile): Spark
    runs the table's steps and writes the day's partition."""
    from pipelines.engines.spark.runner import SparkLedger

    root = spark_root(cfg)
    began = time.time()
    ops_steps: list[str] = []
    ledger = SparkLedger(shared_session(cfg), root, ops=lambda name, _params: ops_steps.append(name))
    for read in sorted(tables_named(table) | set(REFERENCE)):
        if (root / read).is_dir():
            ledger.register(read)
    rows = ledger.write_day(table, params)
    return SparkDay(table, root, rows, ops_steps, began, time.time())


def finish(con: duckdb.DuckDBPyConnection, day: SparkDay, params: dict[str, object]) -> int:
    """Under the writer lock: the warehouse's view of the table, then its ops steps on DuckDB, which
    read the day just written. Returns the day's rows."""
    create_views(con, day.root, [day.table])
    for name in day.ops_steps:
        run_sql(con, name, params)
    return day.rows


# Intermediate tables DuckDB computes whatever the engine: the storage rules are compiled into the
# connection's macros (pipelines/defs/storage/assets.py). Spark reads them as it reads staging, mirrored
# day by day where they changed.
ON_DUCKDB = ("intermediate/int_storage_objects",)


def is_spark_table(table: str) -> bool:
    """Whether Spark computes `table`: the ledger's intermediate tables and marts, not the reference
    catalogs loaded among them nor the tables DuckDB computes on every engine."""
    return table.split("/")[0] in ("intermediate", "marts") and table not in REFERENCE and table not in ON_DUCKDB


def _base_table(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    schema, name = table.split("/")
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                       "AND schema_name = $s AND table_name = $t", {"s": schema, "t": name}).fetchall()[0][0] > 0
