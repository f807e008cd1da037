-- Plan against actual for the team's planned runs (docs/plans.md#plan-against-actual): each run's latest
-- row of marts.fct_run_budget_daily up to $end, for runs active or planned in [$start, $end]. A row per
-- run, with the plan's currency (NULL when the plan has no price: then it goes with the first section).
SELECT coalesce(billing_currency, $first_currency) AS currency, run_id, project, day, planned_tokens,
       planned_gpu_hours, budget_gpu_hours, planned_cost, budget_cost, gpu_hours_to_date, cost_to_date,
       tokens_kept_to_date, burn_pct, progress_pct, projected_gpu_hours, projected_cost,
       projected_overrun_gpu_hours, projected_overrun_cost
FROM marts.fct_run_budget_daily
WHERE team = $team AND day <= $end
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY day DESC) = 1
    AND max(day) OVER (PARTITION BY run_id) >= $start
ORDER BY currency, budget_cost DESC NULLS LAST, run_id
