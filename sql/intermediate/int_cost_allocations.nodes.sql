-- Step 1 of the day's cost allocation: each billed node-hour's cost is split over the GPU-seconds of
-- that hour on that node — every job's category, plus `idle_unallocated` for billed GPU-seconds no
-- job held — by largest remainder, so the pieces sum to the node-hour exactly. A node-hour with no
-- GPU-seconds to split by (GPU count unknown) is `unattributed`.
CREATE OR REPLACE TEMP TABLE node_hour_weights AS
WITH allocated AS (
    SELECT g.hostname, g.hour_ts, g.job_uid, g.category, g.rerun_part, g.gpu_seconds
    FROM intermediate.int_gpu_seconds g
    WHERE g.day = $day
),
idle AS (
    SELECT nh.hostname, nh.hour_ts, NULL::VARCHAR AS job_uid, 'idle_unallocated' AS category, NULL AS rerun_part,
           greatest(0, nh.gpu_count * nh.billed_seconds - coalesce(sum(a.gpu_seconds), 0)) AS gpu_seconds
    FROM intermediate.int_node_hours nh
    LEFT JOIN allocated a ON a.hostname = nh.hostname AND a.hour_ts = nh.hour_ts
    WHERE nh.day = $day
    GROUP BY nh.hostname, nh.hour_ts, nh.gpu_count, nh.billed_seconds
),
weights AS (
    SELECT a.* FROM allocated a
    JOIN intermediate.int_node_hours nh ON nh.day = $day AND nh.hostname = a.hostname AND nh.hour_ts = a.hour_ts
    UNION ALL SELECT * FROM idle
)
SELECT w.hostname, w.hour_ts, w.job_uid, w.category, w.rerun_part, w.gpu_seconds,
       w.hostname || '|' || strftime(w.hour_ts, '%Y-%m-%dT%H') AS node_hour_key,
       coalesce(w.job_uid, '') || '|' || w.category || coalesce(':' || w.rerun_part, '') AS piece_key,
       round(w.gpu_seconds * 1000)::HUGEINT AS weight
FROM weights w;

CREATE OR REPLACE TEMP TABLE split_input AS
WITH splittable AS (
    SELECT node_hour_key FROM node_hour_weights GROUP BY 1 HAVING sum(weight) > 0
)
SELECT w.node_hour_key || '|' || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(nh.effective_cost) ELSE money_units(nh.billed_cost) END AS units,
       w.weight
FROM node_hour_weights w
JOIN splittable USING (node_hour_key)
JOIN intermediate.int_node_hours nh ON nh.day = $day AND nh.hostname = w.hostname AND nh.hour_ts = w.hour_ts
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
