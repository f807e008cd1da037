-- Allocated GPU-seconds of $day per job, host, hour and category, in the precedence of the ledger's
-- categories (docs/ledger.md#categories): rerun_loss > allocated_idle > failed_job > unmonitored >
-- productive. Built from the slot intervals of 10_slot_segments.sql; `idle_unallocated` is what the bill covers beyond these (see
-- int_cost_allocations).
SELECT $day::DATE AS day, date_trunc('hour', g.s) AS hour_ts, s.hostname, s.job_uid,
       split_part(g.category, ':', 1) AS category,
       nullif(split_part(g.category, ':', 2), '') AS rerun_part,   -- lost | restart, for rerun_loss
       sum((epoch(g.e) - epoch(g.s)) * s.multiplicity) AS gpu_seconds
FROM slot_segments g
JOIN slots s USING (slot_id)
GROUP BY ALL
