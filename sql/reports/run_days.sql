-- A run's days, per billing currency (marts.fct_run_efficiency_daily): GPU time, tokens, MFU, goodput,
-- cost and cost per 1M tokens kept, for the run's page.
SELECT billing_currency, day, team, project, gpu_model, dtype, gpu_seconds, productive_gpu_seconds, tokens_kept,
       mfu, effective_mfu, reported_mfu, goodput, effective_cost, cost_per_mtok, mfu_adjusted_cost_per_mtok,
       mfu_gap_cost
FROM marts.fct_run_efficiency_daily
WHERE run_id = $run
ORDER BY billing_currency, day
