-- The team's cost per billing currency and ledger category over [$start, $end]: each currency's
-- headline numbers (total, GPU cost, waste by kind) are sums of its rows, in DECIMAL; two currencies
-- are never added. GPU-seconds are the mart's: a node-hour billed in two currencies counts them once,
-- in the first.
SELECT coalesce(billing_currency, $first_currency) AS currency,
       category,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds
FROM marts.fct_cost_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY ALL
ORDER BY currency, category
