-- Idle GPU-seconds of the team's rows per node and hour of day (UTC) over [$start, $end]: billed
-- GPUs no job held (charged to the pool's team) plus allocated GPUs that showed no activity.
SELECT hostname,
       hour(hour_ts) AS hour_of_day,
       coalesce(sum(gpu_seconds) FILTER (category = 'idle_unallocated'), 0)::DOUBLE AS idle_unallocated_gpu_seconds,
       coalesce(sum(gpu_seconds) FILTER (category = 'allocated_idle'), 0)::DOUBLE AS allocated_idle_gpu_seconds
FROM marts.fct_node_hourly
WHERE team = $team AND day BETWEEN $start AND $end
  AND category IN ('idle_unallocated', 'allocated_idle')
GROUP BY hostname, hour_of_day
ORDER BY hostname, hour_of_day
