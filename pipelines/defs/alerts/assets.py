"""ops.alerts: what the day's marts say someone should look at, raised once each (docs/plans.md#alerts).

Each kind of alert is one query, sql/alerts/<kind>.sql, giving the alerts the day calls for; the asset
inserts those whose `alert_id` (a digest of kind, subject and threshold) is not in ops.alerts yet. So
re-running a day, or a later day still over the same threshold, raises nothing new, and an alert keeps
its delivery status. Sensors still to come (hung jobs, step-time regressions) add a query each.
"""

from datetime import date, datetime, timezone

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.partitions import daily_duckdb_asset
from pipelines.lib.resources import LandingZone
from pipelines.lib.sql_lineage import tables_in
from pipelines.lib.warehouse import _bound, bootstrap, sql, transaction

KINDS = ("budget_threshold", "cost_anomaly")
QUERIES = tuple(f"alerts/{kind}" for kind in KINDS)
# The alert's identity: the same kind, subject and threshold is the same alert, whichever day raises it.
ALERT_ID = "substr(sha256(json_array(kind, subject_type, subject, threshold)::VARCHAR), 1, 16)"


@daily_duckdb_asset(
    "ops/alerts",
    group="alerts",
    deps=tuple(sorted(set().union(*(tables_in(sql(q)) for q in QUERIES)))),
    description="""Budget and cost alerts: a run's GPU-hour budget and a project's monthly budget crossing
30/50/80/100 %, a run burning ahead of its progress, a team's day far above its usual cost. Each raised
once (a stable alert_id), with the money at stake; `status` pending until delivered.""",
)
def alerts(context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> dg.MaterializeResult:
    day = date.fromisoformat(context.partition_key)
    params = {"day": day, **landing.org_config().sql_params()}
    raised_at = datetime.now(timezone.utc).replace(tzinfo=None)
    new: dict[str, int] = {}
    with duckdb.get_connection() as con:
        bootstrap(con)
        with transaction(con):
            for kind, query in zip(KINDS, QUERIES):
                text = sql(query)
                before = con.execute("SELECT count(*) FROM ops.alerts").fetchall()[0][0]
                # query names are constants above; values are bound
                con.execute(
                    f"""INSERT OR IGNORE INTO ops.alerts BY NAME
                        SELECT {ALERT_ID} AS alert_id, *, $day::DATE AS day, $raised_at AS raised_at,
                               'pending' AS status
                        FROM ({text})""",
                    {**_bound(text, params), "day": day, "raised_at": raised_at})
                new[kind] = con.execute("SELECT count(*) FROM ops.alerts").fetchall()[0][0] - before
            open_alerts = con.execute("SELECT count(*) FROM ops.alerts WHERE status <> 'delivered'").fetchall()[0][0]
    if any(new.values()):
        context.log.info("raised " + ", ".join(f"{n} {kind}" for kind, n in new.items() if n))
    return dg.MaterializeResult(metadata={"raised": dg.MetadataValue.json(new), "open_alerts": int(open_alerts)})
