-- Idle GPU-seconds of the team's rows per billing currency, node and hour of day (UTC) over
-- [$start, $end]: billed GPUs no job held (charged to the pool's team) plus allocated GPUs that showed
-- no activity. Each currency's section shows the nodes billed in it; a node-hour billed in two
-- currencies has its GPU-seconds on the first currency's rows only (the mart's rule), so no
-- GPU-second shows twice.
SELECT coalesce(billing_currency, $first_currency) AS currency,
       hostname,
       hour(hour_ts) AS hour_of_day,
       coalesce(sum(gpu_seconds) FILTER (category = 'idle_unallocated'), 0)::DOUBLE AS idle_unallocated_gpu_seconds,
       coalesce(sum(gpu_seconds) FILTER (category = 'allocated_idle'), 0)::DOUBLE AS allocated_idle_gpu_seconds
FROM marts.fct_node_hourly
WHERE team = $team AND day BETWEEN $start AND $end
  AND category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_idle)
GROUP BY ALL
HAVING sum(gpu_seconds) > 0
ORDER BY currency, hostname, hour_of_day
