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
-- and host. An `allocated_idle` row carries how much of it came after its idle stretch had lasted
-- policies.hung_job_cancel_minutes (`idle_past_cancel_share_ms`) and policies.idle_session_minutes
-- (`idle_past_session_share_ms`): what a sweep, or an idle timeout, would have saved
-- (docs/ledger.md#savings-opportunities); NULL on the other categories. A GPU the job never used that
-- day while it used another on the host (gpus_active − gpus_seen) has none past a limit: its idle time
-- is the job's oversize (right_size), claimed once.
WITH idle_past AS (
    -- each allocated_idle segment's milliseconds past each limit, from the start of its stretch
    SELECT g.slot_id, g.s, g.e,
           greatest(0, epoch_ms(g.e) - greatest(epoch_ms(g.s), epoch_ms(i.s) + 60000 * $hung_cancel_minutes)) AS past_cancel_ms,
           greatest(0, epoch_ms(g.e) - greatest(epoch_ms(g.s), epoch_ms(i.s) + 60000 * $idle_session_minutes)) AS past_session_ms
    FROM slot_segments g
    JOIN idle_intervals i ON i.slot_id = g.slot_id AND i.s <= g.s AND i.e >= g.e
    -- idle time a job held (every category of a job's segments is one a job held)
    JOIN marts.dim_ledger_categories k ON k.name = g.category AND k.is_idle
    LEFT JOIN slot_never_active n ON n.slot_id = g.slot_id
    -- a GPU the job never used is right_size's all the time it is held, not a stretch past a limit
    WHERE n.slot_id IS NULL
),
exact AS (
    SELECT $day::DATE AS day, date_trunc('hour', g.s) AS hour_ts, s.hostname, s.job_uid,
           split_part(g.category, ':', 1) AS category,
           nullif(split_part(g.category, ':', 2), '') AS rerun_part,   -- lost | restart, for rerun_loss
           sum((epoch_ms(g.e) - epoch_ms(g.s))::HUGEINT * s.multiplicity * s.share_units) AS gpu_share_ms,
           sum(p.past_cancel_ms::HUGEINT * s.multiplicity * s.share_units) AS idle_past_cancel_share_ms,
           sum(p.past_session_ms::HUGEINT * s.multiplicity * s.share_units) AS idle_past_session_share_ms
    FROM slot_segments g
    JOIN slots s USING (slot_id)
    LEFT JOIN idle_past p ON p.slot_id = g.slot_id AND p.s = g.s AND p.e = g.e
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
-- the lens is productive time's (the GPU time that is no waste), the time past a limit idle time's
SELECT e.day, e.hour_ts, e.hostname, e.job_uid, e.category, e.rerun_part,
       share_ms_seconds(e.gpu_share_ms) AS gpu_seconds, e.gpu_share_ms,
       CASE WHEN e.productive THEN coalesce(l.low_activity_share_ms, 0) END AS low_activity_share_ms,
       CASE WHEN e.productive THEN l.activity_share_ms END AS activity_share_ms,
       CASE WHEN e.productive THEN l.activity_weighted_share_ms END AS activity_weighted_share_ms,
       CASE WHEN e.productive THEN l.tensor_share_ms END AS tensor_share_ms,
       CASE WHEN e.productive THEN l.tensor_weighted_share_ms END AS tensor_weighted_share_ms,
       CASE WHEN e.productive THEN l.fb_used_max_mib END AS fb_used_max_mib,
       CASE WHEN e.idle THEN coalesce(e.idle_past_cancel_share_ms, 0) END AS idle_past_cancel_share_ms,
       CASE WHEN e.idle THEN coalesce(e.idle_past_session_share_ms, 0) END AS idle_past_session_share_ms,
       a.gpus_seen, a.gpus_active
FROM (SELECT x.*, k.is_gpu AND NOT k.is_waste AS productive, k.is_idle AS idle
      FROM exact x JOIN marts.dim_ledger_categories k ON k.name = x.category) e
LEFT JOIN lens l ON l.job_uid = e.job_uid AND l.hostname = e.hostname AND l.hour_ts = e.hour_ts
LEFT JOIN slot_activity a ON a.job_uid = e.job_uid AND a.hostname = e.hostname
