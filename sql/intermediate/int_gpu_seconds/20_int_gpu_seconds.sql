-- Allocated GPU-seconds of $day per job, host, hour and category, in the precedence of the ledger's
-- categories (docs/ledger.md#categories): rerun_loss > allocated_idle > failed_job > unmonitored >
-- productive. Built from the slot intervals of 10_slot_segments.sql; `idle_unallocated` is what the bill covers beyond these (see
-- int_cost_allocations). A slice of a shared GPU counts its share of the GPU's seconds (3/7 of them for a
-- 3g.40gb instance): `gpu_share_ms` exactly, in milliseconds of share units (share_units_per_gpu() a GPU),
-- which is what money is split by; `gpu_seconds` is that as a number (share_ms_seconds).
-- A `productive` row also carries the under-use lens of its time (NULL on the other categories):
-- `low_activity_share_ms` of it in low-activity minutes (exact, ≤ gpu_share_ms), and the weights of its
-- mean SM and tensor activity and its peak memory use. `gpus_seen` / `gpus_active` (the job's whole
-- GPUs on the host with their own series, and those ever active that day) are on every row of the job
-- and host.
WITH exact AS (
    SELECT $day::DATE AS day, date_trunc('hour', g.s) AS hour_ts, s.hostname, s.job_uid,
           split_part(g.category, ':', 1) AS category,
           nullif(split_part(g.category, ':', 2), '') AS rerun_part,   -- lost | restart, for rerun_loss
           sum((epoch_ms(g.e) - epoch_ms(g.s))::HUGEINT * s.multiplicity * s.share_units) AS gpu_share_ms
    FROM slot_segments g
    JOIN slots s USING (slot_id)
    GROUP BY ALL
),
lens AS (
    SELECT s.job_uid, s.hostname, l.hour_ts,
           sum(coalesce(l.low_activity_ms, 0)::HUGEINT * s.multiplicity * s.share_units) AS low_activity_share_ms,
           sum(l.activity_ms::HUGEINT * s.multiplicity * s.share_units) AS activity_share_ms,
           -- activity-weighted milliseconds in millionths of activity
           sum(l.activity_weighted_ms::HUGEINT * s.multiplicity * s.share_units) AS activity_weighted_share_ms,
           sum(l.tensor_ms::HUGEINT * s.multiplicity * s.share_units) AS tensor_share_ms,
           sum(l.tensor_weighted_ms::HUGEINT * s.multiplicity * s.share_units) AS tensor_weighted_share_ms,
           max(l.fb_used_max_mib) AS fb_used_max_mib
    FROM productive_lens l JOIN slots s USING (slot_id)
    GROUP BY s.job_uid, s.hostname, l.hour_ts
)
SELECT e.day, e.hour_ts, e.hostname, e.job_uid, e.category, e.rerun_part,
       share_ms_seconds(e.gpu_share_ms) AS gpu_seconds, e.gpu_share_ms,
       CASE WHEN e.category = 'productive' THEN coalesce(l.low_activity_share_ms, 0) END AS low_activity_share_ms,
       CASE WHEN e.category = 'productive' THEN l.activity_share_ms END AS activity_share_ms,
       CASE WHEN e.category = 'productive' THEN l.activity_weighted_share_ms END AS activity_weighted_share_ms,
       CASE WHEN e.category = 'productive' THEN l.tensor_share_ms END AS tensor_share_ms,
       CASE WHEN e.category = 'productive' THEN l.tensor_weighted_share_ms END AS tensor_weighted_share_ms,
       CASE WHEN e.category = 'productive' THEN l.fb_used_max_mib END AS fb_used_max_mib,
       a.gpus_seen, a.gpus_active
FROM exact e
LEFT JOIN lens l ON l.job_uid = e.job_uid AND l.hostname = e.hostname AND l.hour_ts = e.hour_ts
LEFT JOIN slot_activity a ON a.job_uid = e.job_uid AND a.hostname = e.hostname
