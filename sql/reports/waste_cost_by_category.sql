-- The team's cost per ledger category over [$start, $end]: the headline numbers (total, GPU cost,
-- waste by kind) are sums of these rows, in DECIMAL.
SELECT category,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds
FROM marts.fct_cost_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY category
ORDER BY category
