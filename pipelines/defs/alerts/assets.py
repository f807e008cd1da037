"""ops.alerts: what the day's marts say someone should look at, one episode each (docs/plans.md#alerts).

Each query, sql/alerts/<query>.sql, gives the conditions that hold as of the day's end; the asset merges
them into ops.alerts through pipelines/alerts/raising.py: a new kind and subject opens an alert, one
found again is updated, one no longer found is resolved, and an evaluation no later than an alert's
last change leaves it alone — so re-running or backfilling a day raises nothing new. Hung jobs, idle
sessions and step-time regressions are raised within the hour by the live sensor (pipelines/alerts/live.py)
with the same queries and code; the daily run raises any it missed.
"""

from datetime import date, datetime, timedelta, timezone

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.alerts.raising import QUERY_KINDS, raise_alerts
from pipelines.lib.dagster_glue.partitions import daily_duckdb_asset
from pipelines.lib.dagster_glue.resources import LandingZone
from pipelines.lib.warehouse.sql_lineage import tables_in
from pipelines.lib.warehouse import bootstrap, sql, transaction

QUERIES = tuple(QUERY_KINDS)


@daily_duckdb_asset(
    "ops/alerts",
    group="alerts",
    deps=tuple(sorted(set().union(*(tables_in(sql(f"alerts/{q}")) for q in QUERIES)))),
    description="""Budget and cost alerts: a run's GPU-hour budget and a project's monthly budget crossing
30/50/80/100 %, a run burning ahead of its progress, a team's day far above its usual cost; hung jobs, idle
sessions and step-time regressions the live sensor did not raise yet. One alert per kind and subject (an
episode: opened, updated, resolved), with the money at stake; `status` pending until delivered.""",
)
def alerts(context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> dg.MaterializeResult:
    day = date.fromisoformat(context.partition_key)
    # hung jobs and step-time regressions as of the day's end: the live sensor raised most of them already
    as_of = datetime.combine(day + timedelta(days=1), datetime.min.time())
    cfg = landing.org_config()
    params = {"day": day, "as_of": as_of, **cfg.sql_params()}
    raised_at = datetime.now(timezone.utc).replace(tzinfo=None)
    new: dict[str, int] = {}
    with duckdb.get_connection() as con:
        bootstrap(con)
        with transaction(con):
            new = raise_alerts(con, QUERIES, params, day, as_of, raised_at, cfg.alerts.severity)
            open_alerts = con.execute("SELECT count(*) FROM ops.alerts WHERE resolved_at IS NULL").fetchall()[0][0]
    if any(new.values()):
        context.log.info("raised " + ", ".join(f"{n} {kind}" for kind, n in new.items() if n))
    return dg.MaterializeResult(metadata={"raised": dg.MetadataValue.json(new), "open_alerts": int(open_alerts)})
