from pipelines.defs.plans.assets import dim_run_plans, fct_run_budget_daily, stg_plans__run_plans
from pipelines.ingest.sources import PLANS
from pipelines.ingest.staging_asset import contract_check
from pipelines.lib.dagster_glue.expectations import MartExpectations, expectations_check

plans_contract = contract_check(stg_plans__run_plans, PLANS)

run_plans_expectations = expectations_check(
    dim_run_plans,
    MartExpectations("marts/dim_run_plans", key=("day", "run_id"),
                     non_negative=("flops", "ideal_gpu_hours", "planned_gpu_hours", "budget_gpu_hours")),
)
run_budget_expectations = expectations_check(
    fct_run_budget_daily,
    MartExpectations("marts/fct_run_budget_daily", key=("day", "run_id"),
                     non_negative=("gpu_hours", "gpu_hours_to_date", "tokens_kept_to_date")),
)
