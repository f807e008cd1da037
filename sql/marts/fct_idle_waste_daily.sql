-- Idle GPUs per day, team and node: billed GPU-seconds no job held (charged to the pool's team) and
-- allocated GPU-seconds that showed no activity, with what they cost, per billing currency.
SELECT day, team, hostname, billing_currency,
       coalesce(sum(gpu_seconds) FILTER (category = 'idle_unallocated'), 0)::DOUBLE AS idle_unallocated_gpu_seconds,
       coalesce(sum(gpu_seconds) FILTER (category = 'allocated_idle'), 0)::DOUBLE AS allocated_idle_gpu_seconds,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost
FROM intermediate.int_cost_allocations
WHERE day = $day AND category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_idle) AND hostname IS NOT NULL
GROUP BY day, team, hostname, billing_currency
-- an hour whose GPUs were all held and busy leaves an idle piece of nothing: not a row
HAVING sum(gpu_seconds) <> 0 OR sum(effective_cost) <> 0 OR sum(billed_cost) <> 0
