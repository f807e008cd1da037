-- The badput of the team's runs over [$start, $end] (marts.fct_run_badput_daily), per billing currency,
-- run and kind, goodput included (the chart shows it beside the badput): cost and GPU-seconds. A run's
-- GPU-seconds are on its first currency's rows; here each currency's row of a kind carries all of them.
WITH rows AS (
    SELECT * FROM marts.fct_run_badput_daily
    WHERE team = $team AND day BETWEEN $start AND $end
),
seconds AS (
    SELECT run_id, kind, sum(gpu_seconds)::DOUBLE AS gpu_seconds FROM rows GROUP BY run_id, kind
)
SELECT r.billing_currency AS currency, r.run_id, r.kind, sum(r.effective_cost)::DECIMAL(38, 18) AS effective_cost,
       any_value(s.gpu_seconds) AS gpu_seconds
FROM rows r JOIN seconds s USING (run_id, kind)
WHERE r.billing_currency IS NOT NULL
GROUP BY r.billing_currency, r.run_id, r.kind
ORDER BY 1, 2, 3
