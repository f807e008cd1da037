-- Where a run's GPU time went over all its days, per billing currency and kind (marts.fct_run_badput_daily:
-- goodput and each kind of badput, summing exactly to the run's GPU time and cost).
SELECT billing_currency, kind, sum(gpu_seconds) AS gpu_seconds, sum(effective_cost) AS effective_cost
FROM marts.fct_run_badput_daily
WHERE run_id = $run
GROUP BY ALL
ORDER BY billing_currency, effective_cost DESC, kind
