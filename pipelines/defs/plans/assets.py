from pipelines.ingest.sources import PLANS
from pipelines.ingest.staging_asset import staging_asset
from pipelines.engines.sql_asset import sql_asset

stg_plans__run_plans = staging_asset(
    PLANS,
    description="""Run plans from `plans/*.yaml`: model shape, tokens, GPU model and count, dtype, target MFU,
redundancy and the optional price, checkpoint, restart and MTBF inputs. A plan with a bad key goes to
ops.quarantine whole, naming the key and its line.""",
)

fct_checkpoint_saves = sql_asset(
    "marts/fct_checkpoint_saves",
    group="plans",
    description="""Each checkpoint save a trainer logged: when it completed and how long it took (from the
step event it was taken at). The observed save time a plan without `checkpoint_seconds` uses.""",
)

dim_run_plans = sql_asset(
    "marts/dim_run_plans",
    group="plans",
    description="""Each run plan and its estimate as of the day: FLOPs, ideal and planned GPU-hours, failure
overhead, Young–Daly checkpoint interval, GPU-hour budget and cost, each input with where it came from
(the plan, the config, or the warehouse's last 30 days).""",
)

fct_run_budget_daily = sql_asset(
    "marts/fct_run_budget_daily",
    group="plans",
    description="""Plan against actual per day and planned run: planned and budget GPU-hours and cost,
GPU-hours, cost and kept tokens to date, burn and progress %, the projected total at the current pace
and the projected overrun.""",
)
