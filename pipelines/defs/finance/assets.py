from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.ledger_days import mark_day
from pipelines.lib.partitions import daily_duckdb_asset
from pipelines.lib.publish import create_finance_views, publish
from pipelines.lib.resources import LandingZone

MARTS = [
    "marts/fct_cost_daily", "marts/fct_job_cost", "marts/fct_rerun_loss", "marts/fct_idle_waste_daily",
    "marts/fct_run_efficiency_daily", "marts/fct_run_badput_daily",
    "marts/fct_run_overhead_daily", "marts/fct_node_hourly", "marts/fct_bill_daily", "marts/fct_config_cost_daily",
    "marts/dim_nodes", "marts/dim_projects",
    "marts/fct_checkpoint_saves", "marts/dim_run_plans", "marts/fct_run_budget_daily", "ops/alerts",
    "marts/fct_job_efficiency_daily", "marts/fct_user_cost_daily", "marts/fct_gpu_price_daily",
    "marts/fct_savings_opportunities",
]


@daily_duckdb_asset(
    "ops/published_warehouse",
    group="finance",
    deps=tuple(MARTS),
    description="""The warehouse finance reads: marts, `finance` views (monthly chargeback, daily and
monthly reconciliation, unit economics, budget burn) and ops tables, written to a new DuckDB file and
swapped in by rename once the day's marts are done. Readers never block the daily run and never see a
half-written day.""",
)
def published_warehouse(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone
) -> dg.MaterializeResult:
    cfg = landing.org_config()
    day = date.fromisoformat(context.partition_key)
    with duckdb.get_connection() as con:
        # every step before this one succeeded: the day's books are whole (written before the copy, so
        # the published file says so too; a failure after it is marked by `gpuledger run`)
        mark_day(con, day, "succeeded", context.run.run_id)
        create_finance_views(con, cfg)
        target = publish(con, cfg)
        recon = con.execute(
            "SELECT difference_effective_cost, difference_billed_cost FROM finance.reconciliation_daily WHERE day = $day",
            {"day": day},
        ).fetchall()
    diff = recon[0] if recon else (None, None)
    if target is None:
        context.log.info(f"{day}: not published yet: the live warehouse lacks days the published file has, "
                         "and this run rebuilds them next")
    return dg.MaterializeResult(
        metadata={
            "path": str(target or "(held back until the lost days are rebuilt)"),
            "difference_effective_cost": str(diff[0]),
            "difference_billed_cost": str(diff[1]),
        }
    )
