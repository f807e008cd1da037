from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.ledger_days import mark_day
from pipelines.lib.dagster_glue.partitions import daily_duckdb_asset
from pipelines.lib.warehouse.publish import FINANCE_VIEWS, create_budgets, create_fx_rates, publish
from pipelines.lib.dagster_glue.resources import LandingZone
from pipelines.lib.warehouse.sql_lineage import tables_in
from pipelines.lib.warehouse import SQL_ROOT, sql

# every mart (a table of sql/marts/, its SQL a file or a step folder) and the alerts: what the published
# file holds besides the finance views, found from the SQL so a new mart is never left out
ASSETS_IN_OPS = ("ops/alerts",)  # ops is bookkeeping every step writes; of it, only the alerts are an asset
MARTS = sorted(f"marts/{p.name.removesuffix('.sql')}" for p in (SQL_ROOT / "marts").iterdir()
               if p.name != "checks" and (p.is_dir() or p.suffix == ".sql")) + list(ASSETS_IN_OPS)


def _summary(text: str) -> str:
    """A SQL file's opening comment: the asset's description in the UI."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line.removeprefix("--").strip())
    return " ".join(lines)


def _config_table(name: str, create, description: str) -> dg.AssetsDefinition:
    @daily_duckdb_asset(f"finance/{name}", group="finance", description=description)
    def _table(context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> None:
        with duckdb.get_connection() as con:
            create(con, landing.org_config())

    return _table


def _finance_view(view: str) -> dg.AssetsDefinition:
    """The view `finance.<view>` of sql/finance/<view>.sql, its dependencies the tables its SQL reads."""
    text = sql(f"finance/{view}")
    # the asset tables it reads (sql_lineage's own rule), the other finance assets, and the alerts
    named = tables_in(text, assets_only=False)
    deps = sorted((tables_in(text) | {t for t in named if t.startswith("finance/") or t in ASSETS_IN_OPS})
                  - {f"finance/{view}"})

    @daily_duckdb_asset(f"finance/{view}", group="finance", description=_summary(text), deps=tuple(deps))
    def _view(context: dg.AssetExecutionContext, duckdb: DuckDBResource) -> None:
        with duckdb.get_connection() as con:
            con.execute(text)  # CREATE OR REPLACE VIEW: the same view every day, made again if it changed

    return _view


budgets = _config_table("budgets", create_budgets, "The config's monthly budgets per project (`budgets:`), "
                        "which finance.budget_burn reads.")
fx_rates = _config_table("fx_rates", create_fx_rates, "The config's exchange rates into the reporting currency "
                         "(`fx:`), per currency and month, which the finance views convert with.")
FINANCE_VIEW_ASSETS = [_finance_view(view) for view in FINANCE_VIEWS]


@daily_duckdb_asset(
    "ops/published_warehouse",
    group="finance",
    deps=tuple(MARTS) + tuple(f"finance/{view}" for view in FINANCE_VIEWS),
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
