from datetime import date

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.defs.marts.assets import (
    fct_cost_daily,
    fct_idle_waste_daily,
    fct_job_cost,
    fct_job_efficiency_daily,
    fct_rerun_loss,
    fct_run_efficiency_daily,
)
from pipelines.defs.marts.assets import fct_run_badput_daily, fct_run_overhead_daily
from pipelines.lib.dagster_glue.expectations import MartExpectations, expectations_check
from pipelines.lib.dagster_glue.partitions import DAILY
from pipelines.lib.dagster_glue.resources import LandingZone
from pipelines.lib.warehouse import sql


@dg.asset_check(asset=fct_cost_daily, blocking=True, partitions_def=DAILY)
def conservation(context: dg.AssetCheckExecutionContext, duckdb: DuckDBResource,
                 landing: LandingZone) -> dg.AssetCheckResult:
    """Allocated = costed, exactly, per billing currency and cost source, for EffectiveCost and BilledCost:
    the day's rows of fct_cost_daily sum to the day's share of every landed bill line and of every cost
    line the config generated (rate cards, contracts, owned hardware, energy), and every bill line that
    lies within the day is there in full."""
    day = date.fromisoformat(context.partition_key)
    params = {"day": day, "default_currency": landing.org_config().default_currency}
    with duckdb.get_connection() as con:
        rows = con.execute(sql("marts/checks/conservation"), params).fetchall()
    by_currency, passed = {}, True
    for currency, source, alloc_e, alloc_b, bill_e, bill_b, single_e, single_b, pieces_e, pieces_b in rows:
        passed &= alloc_e == bill_e and alloc_b == bill_b and single_e == pieces_e and single_b == pieces_b
        by_currency[f"{currency} {source}"] = {
            "allocated_effective_cost": str(alloc_e), "cost_lines_effective_cost": str(bill_e),
            "allocated_billed_cost": str(alloc_b), "cost_lines_billed_cost": str(bill_b),
            "difference_effective_cost": str(alloc_e - bill_e), "difference_billed_cost": str(alloc_b - bill_b),
        }
    return dg.AssetCheckResult(passed=bool(passed), metadata={
        "currencies": dg.MetadataValue.json(by_currency),
        "difference_effective_cost": "; ".join(f"{c} {v['difference_effective_cost']}" for c, v in by_currency.items()),
        "difference_billed_cost": "; ".join(f"{c} {v['difference_billed_cost']}" for c, v in by_currency.items()),
    })


cost_daily_expectations = expectations_check(
    fct_cost_daily,
    MartExpectations("marts/fct_cost_daily", key=("day", "team", "project", "category", "billing_currency", "cost_source"),
                     non_negative=("gpu_seconds",), category_column="category", must_have_rows=True),
)
job_cost_expectations = expectations_check(
    fct_job_cost,
    MartExpectations("marts/fct_job_cost", key=("day", "job_uid", "billing_currency"),
                     non_negative=("gpu_seconds", "productive_gpu_seconds", "rerun_loss_gpu_seconds",
                                   "allocated_idle_gpu_seconds", "failed_job_gpu_seconds", "unmonitored_gpu_seconds")),
)
rerun_loss_expectations = expectations_check(
    fct_rerun_loss,
    MartExpectations("marts/fct_rerun_loss", key=("day", "interrupted_job_uid", "billing_currency"),
                     non_negative=("lost_gpu_seconds", "restart_gpu_seconds")),
)
idle_waste_expectations = expectations_check(
    fct_idle_waste_daily,
    MartExpectations("marts/fct_idle_waste_daily", key=("day", "team", "hostname", "billing_currency"),
                     non_negative=("idle_unallocated_gpu_seconds", "allocated_idle_gpu_seconds")),
)
run_badput_expectations = expectations_check(
    fct_run_badput_daily,
    MartExpectations("marts/fct_run_badput_daily", key=("day", "run_id", "billing_currency", "kind"),
                     non_negative=("gpu_seconds",)),
)
run_overhead_expectations = expectations_check(
    fct_run_overhead_daily,
    MartExpectations("marts/fct_run_overhead_daily", key=("day", "run_id", "billing_currency"),
                     non_negative=("jobs", "queue_wait_seconds", "queue_wait_gpu_hours", "checkpoints")),
)
run_efficiency_expectations = expectations_check(
    fct_run_efficiency_daily,
    MartExpectations("marts/fct_run_efficiency_daily", key=("day", "run_id", "billing_currency"),
                     non_negative=("gpu_seconds", "tokens", "tokens_kept"), between_0_and_1=("goodput",)),
)
job_efficiency_expectations = expectations_check(
    fct_job_efficiency_daily,
    MartExpectations("marts/fct_job_efficiency_daily", key=("day", "job_uid", "billing_currency"),
                     non_negative=("low_activity_gpu_seconds", "gpus_never_active", "right_size_gpus"),
                     between_0_and_1=("sm_active_avg", "tensor_active_avg")),
)
