-- The team's cost per billing currency, day and category over [$start, $end] (the trend window), for
-- each currency's stacked chart.
SELECT coalesce(billing_currency, $first_currency) AS currency,
       day, category,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds
FROM marts.fct_cost_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY ALL
ORDER BY currency, day, category
