"""The published warehouse: what finance and every SQL client read.

Each run ends by writing the marts, the finance views and the ops tables into a new DuckDB file and
renaming it over the published one. A rename is atomic, so a reader sees the old day or the new one,
never half of one, and never holds the writer's lock: the live warehouse is written by one process
at a time, while the published file is only ever read.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import polars as pl

from pipelines.lib.atomic import remove_stale_temps, replace_atomically
from pipelines.lib.config import OrgConfig
from pipelines.lib.ledger_days import PublishWouldLoseDays, days_of_books, pending_days
from pipelines.lib.warehouse import SQL_ROOT, sql, step, warehouse_path

PUBLISHED_SCHEMAS = ("marts", "ops")
FINANCE_VIEWS = sorted(p.stem for p in (SQL_ROOT / "finance").glob("*.sql"))


def published_path() -> Path:
    """$GPULEDGER_PUBLISHED, else `<warehouse>.published.duckdb` beside the warehouse."""
    explicit = os.environ.get("GPULEDGER_PUBLISHED")
    if explicit:
        return Path(explicit)
    live = warehouse_path()
    return live.with_name(f"{live.stem}.published.duckdb")


def create_finance_views(con: duckdb.DuckDBPyConnection, cfg: OrgConfig) -> None:
    """The `finance` schema: the config's tables, then one view per file in sql/finance/ (the daily job
    makes each as an asset, `finance/<view>`; this makes them all at once where no job runs)."""
    create_budgets(con, cfg)
    create_fx_rates(con, cfg)
    for view in FINANCE_VIEWS:
        con.execute(sql(f"finance/{view}"))


def create_budgets(con: duckdb.DuckDBPyConnection, cfg: OrgConfig) -> None:
    """finance.budgets: the config's monthly budgets, which the finance views read."""
    con.execute("CREATE SCHEMA IF NOT EXISTS finance")
    budgets = pl.DataFrame(
        {"project": list(cfg.budgets), "monthly_budget": [str(b.amount) for b in cfg.budgets.values()],
         "billing_currency": [b.currency for b in cfg.budgets.values()]},
        schema={"project": pl.String, "monthly_budget": pl.String, "billing_currency": pl.String},
    )
    con.register("budgets_in", budgets)
    con.execute("CREATE OR REPLACE TABLE finance.budgets AS SELECT project, "
                "monthly_budget::DECIMAL(38, 18) AS monthly_budget, billing_currency FROM budgets_in")
    con.unregister("budgets_in")


def create_fx_rates(con: duckdb.DuckDBPyConnection, cfg: OrgConfig) -> None:
    """finance.fx_rates, and the macro that converts with them (sql/macros/15_times_rate.sql: bootstrap
    makes it too, but a published file is made without bootstrap)."""
    con.execute("CREATE SCHEMA IF NOT EXISTS finance")
    # exchange rates into the reporting currency, per currency and month; the reporting currency
    # itself converts at 1 in every month (month NULL). No rates configured: no conversion at all.
    rates = [(r.currency, r.month, str(r.rate), r.source) for r in cfg.fx.rates]
    if rates:
        rates.append((cfg.fx.reporting_currency, None, "1", "identity"))
    fx = pl.DataFrame(rates, schema={"currency": pl.String, "month": pl.String, "rate": pl.String,
                                     "source": pl.String}, orient="row")
    con.register("fx_in", fx)
    con.execute("CREATE OR REPLACE TABLE finance.fx_rates AS SELECT currency, month, rate::DECIMAL(38, 18) AS rate, "
                "source, $reporting AS reporting_currency FROM fx_in", {"reporting": cfg.fx.reporting_currency})
    con.unregister("fx_in")
    con.execute(sql(step("macros", "times_rate")))


def publish(con: duckdb.DuckDBPyConnection, cfg: OrgConfig, target: Path | None = None) -> Path | None:
    """Copies the published schemas into a fresh file and swaps it in by rename. Never drops a day the
    published file has: when the live warehouse lacks some, it raises PublishWouldLoseDays, or, when
    the same `gpuledger run` is about to rebuild them all, publishes nothing yet and returns None."""
    target = target or published_path()
    lost = sorted(_published_days(con, target) - days_of_books(con))
    if lost:
        if set(lost) <= pending_days():
            return None
        raise PublishWouldLoseDays(lost, warehouse_path(), target)
    con.execute("CHECKPOINT")
    remove_stale_temps(target.parent, of=target.name)  # a killed publish's half file: a warehouse's size
    replace_atomically(target, lambda staging_file: _build(con, cfg, staging_file))
    return target


def _build(con: duckdb.DuckDBPyConnection, cfg: OrgConfig, staging_file: Path) -> None:
    tables = con.execute(
        "SELECT table_schema, table_name FROM information_schema.tables "
        "WHERE table_catalog = current_database() AND table_type = 'BASE TABLE' AND table_schema IN ('marts', 'ops') "
        "ORDER BY ALL"
    ).fetchall()
    # On Spark the marts are views over its Parquet (docs/spark.md): the published file gets the same views.
    views = [sql_text for (sql_text,) in con.execute(
        "SELECT sql FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'marts' "
        "AND NOT internal ORDER BY view_name").fetchall()]
    # ATTACH takes no bound parameters; the path is ours, not input, and quoted.
    con.execute(f"ATTACH '{_quoted(staging_file)}' AS published")
    try:
        for schema in PUBLISHED_SCHEMAS:
            con.execute(f"CREATE SCHEMA published.{schema}")
        for schema, table in tables:
            con.execute(f'CREATE TABLE published.{schema}."{table}" AS SELECT * FROM {schema}."{table}"')
    finally:
        con.execute("DETACH published")
    # Views bind to the catalog they are created in: make them with the new file opened on its own.
    with duckdb.connect(str(staging_file)) as out:
        for view in views:
            out.execute(view)
        create_finance_views(out, cfg)
        out.execute("CHECKPOINT")


def _published_days(con: duckdb.DuckDBPyConnection, target: Path) -> set:
    if not target.exists():
        return set()
    con.execute(f"ATTACH '{_quoted(target)}' AS previously_published (READ_ONLY)")
    try:
        return days_of_books(con, "previously_published")
    finally:
        con.execute("DETACH previously_published")


def _quoted(path: Path) -> str:
    return str(path.resolve()).replace("'", "''")
