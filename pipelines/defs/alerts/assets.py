"""ops.alerts: what the day's marts say someone should look at, raised once each (docs/plans.md#alerts).

Each kind of alert is one query, sql/alerts/<kind>.sql, giving the alerts the day calls for; the asset
inserts those whose `alert_id` (a digest of kind, subject and threshold) is not in ops.alerts yet. So
re-running a day, or a later day still over the same threshold, raises nothing new, and an alert keeps
its delivery status. Hung jobs and step-time regressions are raised within the hour by the live sensor
(pipelines/alerts/live.py) with the same queries; the daily run raises any it missed.
"""

from datetime import date, datetime, timedelta, timezone

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.alerts.raising import LIVE_KINDS, insert_alerts
from pipelines.lib.partitions import daily_duckdb_asset
from pipelines.lib.resources import LandingZone
from pipelines.lib.sql_lineage import tables_in
from pipelines.lib.warehouse import bootstrap, sql, transaction

KINDS = ("budget_threshold", "cost_anomaly", *LIVE_KINDS)
QUERIES = tuple(f"alerts/{kind}" for kind in KINDS)


@daily_duckdb_asset(
    "ops/alerts",
    group="alerts",
    deps=tuple(sorted(set().union(*(tables_in(sql(q)) for q in QUERIES)))),
    description="""Budget and cost alerts: a run's GPU-hour budget and a project's monthly budget crossing
30/50/80/100 %, a run burning ahead of its progress, a team's day far above its usual cost; hung jobs and
step-time regressions the live sensor did not raise yet. Each raised once (a stable alert_id), with the
money at stake; `status` pending until delivered.""",
)
def alerts(context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> dg.MaterializeResult:
    day = date.fromisoformat(context.partition_key)
    # hung jobs and step-time regressions as of the day's end: the live sensor raised most of them already
    as_of = datetime.combine(day + timedelta(days=1), datetime.min.time())
    params = {"day": day, "as_of": as_of, **landing.org_config().sql_params()}
    raised_at = datetime.now(timezone.utc).replace(tzinfo=None)
    new: dict[str, int] = {}
    with duckdb.get_connection() as con:
        bootstrap(con)
        with transaction(con):
            new = insert_alerts(con, KINDS, params, day, raised_at)
            open_alerts = con.execute("SELECT count(*) FROM ops.alerts WHERE status <> 'delivered'").fetchall()[0][0]
    if any(new.values()):
        context.log.info("raised " + ", ".join(f"{n} {kind}" for kind, n in new.items() if n))
    return dg.MaterializeResult(metadata={"raised": dg.MetadataValue.json(new), "open_alerts": int(open_alerts)})
