-- The team's $top most expensive idle nodes over [$start, $end], idle = no job held the GPU
-- (idle_unallocated) or the job held it at 0 % (allocated_idle).
SELECT hostname,
       count(DISTINCT day) AS days,
       sum(idle_unallocated_gpu_seconds)::DOUBLE AS idle_unallocated_gpu_seconds,
       sum(allocated_idle_gpu_seconds)::DOUBLE AS allocated_idle_gpu_seconds,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost
FROM marts.fct_idle_waste_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY hostname
HAVING sum(idle_unallocated_gpu_seconds) + sum(allocated_idle_gpu_seconds) > 0
ORDER BY effective_cost DESC, hostname
LIMIT $top
