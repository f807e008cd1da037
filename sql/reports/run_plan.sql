-- A planned run's plan against actual as of its latest day (marts.fct_run_budget_daily), per currency.
SELECT billing_currency, day, planned_tokens, budget_gpu_hours, budget_cost, gpu_hours_to_date, cost_to_date,
       tokens_kept_to_date, burn_pct, progress_pct, projected_gpu_hours, projected_cost, projected_overrun_cost
FROM marts.fct_run_budget_daily
WHERE run_id = $run
QUALIFY row_number() OVER (PARTITION BY billing_currency ORDER BY day DESC) = 1
ORDER BY billing_currency
