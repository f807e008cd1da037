-- The team's $top most expensive idle nodes per billing currency over [$start, $end], idle = no job
-- held the GPU (idle_unallocated) or the job held it at 0 % (allocated_idle). A node's days and idle
-- GPU-seconds are the node's own, whatever currency they were billed in; its cost is the part billed
-- in the row's currency.
WITH idle AS (
    SELECT coalesce(billing_currency, $first_currency) AS currency, *
    FROM marts.fct_idle_waste_daily
    WHERE team = $team AND day BETWEEN $start AND $end
),
node AS (
    SELECT hostname,
           count(DISTINCT day) AS days,
           sum(idle_unallocated_gpu_seconds)::DOUBLE AS idle_unallocated_gpu_seconds,
           sum(allocated_idle_gpu_seconds)::DOUBLE AS allocated_idle_gpu_seconds
    FROM idle
    GROUP BY hostname
    HAVING sum(idle_unallocated_gpu_seconds) + sum(allocated_idle_gpu_seconds) > 0
),
cost AS (
    SELECT currency, hostname, sum(effective_cost)::DECIMAL(38, 18) AS effective_cost
    FROM idle
    GROUP BY currency, hostname
),
ranked AS (
    SELECT c.currency, n.hostname, n.days, n.idle_unallocated_gpu_seconds, n.allocated_idle_gpu_seconds,
           c.effective_cost,
           row_number() OVER (PARTITION BY c.currency ORDER BY c.effective_cost DESC, n.hostname) AS rank
    FROM cost c JOIN node n USING (hostname)
)
SELECT currency, hostname, days, idle_unallocated_gpu_seconds, allocated_idle_gpu_seconds, effective_cost
FROM ranked
WHERE rank <= $top
ORDER BY currency, rank
