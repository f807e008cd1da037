-- What each costed node-hour's cost is split by: the GPU-seconds of that hour on that node — every
-- job's category, plus `idle_unallocated` (table `unheld`) for costed GPU-seconds no job held — and each node line's
-- piece of the hour, the money to split (lines are split one by one, never summed first, so each
-- piece keeps its origin line and its currency).
CREATE OR REPLACE TEMP TABLE node_hour_weights AS
WITH allocated AS (
    SELECT g.hostname, g.hour_ts, g.job_uid, g.category, g.rerun_part, g.gpu_seconds, g.gpu_share_ms AS weight
    FROM intermediate.int_gpu_seconds g
    WHERE g.day = $day
),
idle AS (
    -- what no job held, in the same exact units: the slices of a shared GPU that no job held are idle
    -- GPU-seconds of that GPU like any unallocated GPU
    SELECT nh.hostname, nh.hour_ts, NULL::VARCHAR AS job_uid, u.category, NULL AS rerun_part,
           greatest(0, nh.gpu_count * nh.billed_seconds - coalesce(sum(a.gpu_seconds), 0)) AS gpu_seconds,
           greatest(0, nh.gpu_count * round(nh.billed_seconds * 1000)::HUGEINT * share_units_per_gpu()
                       - coalesce(sum(a.weight), 0)) AS weight
    FROM costed_node_hours nh
    CROSS JOIN unheld u
    LEFT JOIN allocated a ON a.hostname = nh.hostname AND a.hour_ts = nh.hour_ts
    GROUP BY nh.hostname, nh.hour_ts, nh.gpu_count, nh.billed_seconds, u.category
),
weights AS (
    SELECT a.* FROM allocated a
    JOIN costed_node_hours nh ON nh.hostname = a.hostname AND nh.hour_ts = a.hour_ts
    UNION ALL SELECT * FROM idle
)
-- weights: GPU-milliseconds in share units, so every slice of a shared GPU weighs its exact share
SELECT w.hostname, w.hour_ts, w.job_uid, w.category, w.rerun_part, w.gpu_seconds,
       to_json([w.hostname, strftime(w.hour_ts, '%Y-%m-%dT%H')])::VARCHAR AS node_hour_key,
       to_json([w.job_uid, w.category, w.rerun_part])::VARCHAR AS piece_key,
       w.weight::HUGEINT AS weight,
       -- the node-hour's weight, over which its energy (kWh, CO2e) is shared like its cost: in exact
       -- integers, so each piece's share is the same on every engine and every run
       sum(w.weight::HUGEINT) OVER (PARTITION BY w.hostname, w.hour_ts) AS hour_weight
FROM weights w;

-- each node line's piece of each hour. The node-hour's GPU-seconds (and kWh) are counted once, on its
-- first line (by currency, then line), so GPU-seconds summed over lines or currencies never count twice.
CREATE OR REPLACE TEMP TABLE node_line_hours AS
SELECT l.hostname, l.hour_ts, l.line_key, l.cost_source, l.billing_currency, l.effective_cost, l.billed_cost,
       row_number() OVER (PARTITION BY l.hostname, l.hour_ts ORDER BY l.billing_currency, l.line_key) = 1
           AS carries_gpu_seconds,
       to_json([l.hostname, strftime(l.hour_ts, '%Y-%m-%dT%H')])::VARCHAR AS node_hour_key,
       to_json([l.line_key, l.hostname, strftime(l.hour_ts, '%Y-%m-%dT%H')])::VARCHAR AS line_hour_key
FROM node_cost_lines l;
