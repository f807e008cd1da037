-- A planned run's plan against actual as of its latest day (marts.fct_run_budget_daily), with the plan's
-- currency (NULL when the plan has no price: then it goes with the run's first section). The columns are
-- those of the team report's plan rows (waste_run_budgets.sql), so both pages show it one way.
SELECT billing_currency AS currency, run_id, project, day, planned_tokens, planned_gpu_hours, budget_gpu_hours,
       planned_cost, budget_cost, gpu_hours_to_date, cost_to_date, tokens_kept_to_date, burn_pct, progress_pct,
       projected_gpu_hours, projected_cost, projected_overrun_gpu_hours, projected_overrun_cost
FROM marts.fct_run_budget_daily
WHERE run_id = $run
QUALIFY row_number() OVER (ORDER BY day DESC) = 1
