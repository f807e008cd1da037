-- The team's cost per day and category over [$start, $end] (the trend window), for the stacked chart.
SELECT day, category,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds
FROM marts.fct_cost_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY day, category
ORDER BY day, category
