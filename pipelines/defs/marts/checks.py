from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.marts.assets import fct_cost_daily
from pipelines.lib.partitions import DAILY
from pipelines.lib.warehouse import sql


@dg.asset_check(asset=fct_cost_daily, blocking=True, partitions_def=DAILY)
def conservation(context: dg.AssetCheckExecutionContext, duckdb: DuckDBResource) -> dg.AssetCheckResult:
    """Allocated = billed, exactly, for EffectiveCost and BilledCost: the day's rows of fct_cost_daily
    sum to the day's share of every landed bill line, and every bill line that lies within the day
    is there in full."""
    day = date.fromisoformat(context.partition_key)
    with duckdb.get_connection() as con:
        row = con.execute(sql("marts/checks/conservation"), {"day": day}).fetchall()[0]
    allocated_e, allocated_b, bill_e, bill_b, single_day_e, single_day_b, single_day_lines_e, single_day_lines_b = row
    passed = allocated_e == bill_e and allocated_b == bill_b and single_day_e == single_day_lines_e and single_day_b == single_day_lines_b
    return dg.AssetCheckResult(
        passed=bool(passed),
        metadata={
            "allocated_effective_cost": str(allocated_e),
            "bill_effective_cost": str(bill_e),
            "allocated_billed_cost": str(allocated_b),
            "bill_billed_cost": str(bill_b),
            "difference_effective_cost": str(allocated_e - bill_e),
            "difference_billed_cost": str(allocated_b - bill_b),
        },
    )
