-- Allocated GPU-seconds of $day per job, host, hour and category, in the precedence of DESIGN §3:
-- rerun_loss > allocated_idle > failed_job > unmonitored > productive. Built from the slot intervals
-- of int_gpu_seconds.prepare.sql; `idle_unallocated` is what the bill covers beyond these (see
-- int_cost_allocations).
SELECT $day::DATE AS day, date_trunc('hour', g.s) AS hour_ts, s.hostname, s.job_uid,
       split_part(g.category, ':', 1) AS category,
       nullif(split_part(g.category, ':', 2), '') AS rerun_part,   -- lost | restart, for rerun_loss
       sum((epoch(g.e) - epoch(g.s)) * s.multiplicity) AS gpu_seconds
FROM slot_segments g
JOIN slots s USING (slot_id)
GROUP BY ALL
