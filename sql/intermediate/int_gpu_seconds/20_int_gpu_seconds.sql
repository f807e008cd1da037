-- Allocated GPU-seconds of $day per job, host, hour and category, in the precedence of the ledger's
-- categories (docs/ledger.md#categories): rerun_loss > allocated_idle > failed_job > unmonitored >
-- productive. Built from the slot intervals of 10_slot_segments.sql; `idle_unallocated` is what the bill covers beyond these (see
-- int_cost_allocations). A slice of a shared GPU counts its share of the GPU's seconds (3/7 of them for a
-- 3g.40gb instance): `gpu_share_ms` exactly, in milliseconds of share units (share_units_per_gpu() a GPU),
-- which is what money is split by; `gpu_seconds` is that as a number (share_ms_seconds).
WITH exact AS (
    SELECT $day::DATE AS day, date_trunc('hour', g.s) AS hour_ts, s.hostname, s.job_uid,
           split_part(g.category, ':', 1) AS category,
           nullif(split_part(g.category, ':', 2), '') AS rerun_part,   -- lost | restart, for rerun_loss
           sum((epoch_ms(g.e) - epoch_ms(g.s))::HUGEINT * s.multiplicity * s.share_units) AS gpu_share_ms
    FROM slot_segments g
    JOIN slots s USING (slot_id)
    GROUP BY ALL
)
SELECT day, hour_ts, hostname, job_uid, category, rerun_part, share_ms_seconds(gpu_share_ms) AS gpu_seconds,
       gpu_share_ms
FROM exact
