-- Per cluster and day over [$start, $end], the node-hours' GPU-seconds (marts.fct_node_hourly, every
-- currency: GPU time has none) by what the GPUs did, as `sreport cluster utilization` splits them:
-- billed = every category; allocated = held by a job (all but idle_unallocated); productive; idle =
-- idle_unallocated + allocated_idle. A node without a cluster in marts.dim_nodes counts under NULL.
SELECT n.cluster, h.day,
       sum(h.gpu_seconds)::DOUBLE AS billed,
       -- held by a job: a category a job's time takes (it has a precedence)
       coalesce(sum(h.gpu_seconds) FILTER (h.category IN (SELECT name FROM marts.dim_ledger_categories
                                                          WHERE precedence IS NOT NULL)), 0)::DOUBLE AS allocated,
       coalesce(sum(h.gpu_seconds) FILTER (h.category = 'productive'), 0)::DOUBLE AS productive,
       coalesce(sum(h.gpu_seconds) FILTER (h.category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_idle)), 0)::DOUBLE
           AS idle
FROM marts.fct_node_hourly h
LEFT JOIN marts.dim_nodes n ON n.day = h.day AND n.hostname = h.hostname
WHERE h.day BETWEEN $start AND $end
GROUP BY n.cluster, h.day
ORDER BY n.cluster NULLS LAST, h.day
