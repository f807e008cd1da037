-- Each node's hours by team and category: what the GPUs of every billed node-hour did and cost
-- (the hourly grain behind fct_idle_waste_daily, e.g. for idle heatmaps), per billing currency.
SELECT day, hour_ts, hostname, team, category, billing_currency,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost
FROM intermediate.int_cost_allocations
WHERE day = $day AND line_kind = 'node_hour'
GROUP BY day, hour_ts, hostname, team, category, billing_currency
