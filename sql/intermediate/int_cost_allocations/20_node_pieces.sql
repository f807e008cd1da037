-- The pieces of node-hour cost: each node line's piece of each hour split over that hour's weights by
-- largest remainder, so the pieces sum to the line's hour exactly. A node-hour with no GPU-seconds to
-- split by (GPU count unknown) is `unattributed`.
CREATE OR REPLACE TEMP TABLE node_split_input AS
SELECT l.line_hour_key || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END AS units,
       w.weight
FROM node_line_hours l
JOIN node_hour_weights w USING (node_hour_key)
CROSS JOIN (VALUES ('e'), ('b')) m(measure);

CREATE OR REPLACE TEMP TABLE node_splits AS FROM split_exactly('node_split_input');

CREATE OR REPLACE TEMP TABLE cost_pieces AS
SELECT l.line_key, l.billing_currency,
       CASE WHEN w.job_uid IS NULL THEN coalesce(nh.pool_team, '_unallocated') ELSE j.team END AS team,
       CASE WHEN w.job_uid IS NULL THEN '_unallocated' ELSE j.project END AS project,
       w.category, w.rerun_part, w.job_uid, w.hostname, w.hour_ts, 'node_hour' AS line_kind,
       units_money(se.units) AS effective_cost, units_money(sb.units) AS billed_cost,
       CASE WHEN l.carries_gpu_seconds THEN w.gpu_seconds ELSE 0 END AS gpu_seconds,
       'gpu_seconds' AS method, w.gpu_seconds AS basis_quantity, l.cost_source,
       -- the node-hour's energy by the piece's weight, in integer units of 1e-18 (a DOUBLE quotient cast to
       -- DECIMAL rounded differently on Spark than on DuckDB: 1e-12 kWh apart)
       CASE WHEN l.carries_gpu_seconds AND w.hour_weight > 0
            THEN units_money(money_units(coalesce(en.kwh, 0)) * w.weight // w.hour_weight)::DECIMAL(38, 12)
            ELSE 0 END AS kwh,
       CASE WHEN l.carries_gpu_seconds AND w.hour_weight > 0
            THEN units_money(money_units(coalesce(en.co2e_kg, 0)) * w.weight // w.hour_weight)::DECIMAL(38, 12)
            ELSE 0 END AS co2e_kg
FROM node_line_hours l
JOIN node_hour_weights w USING (node_hour_key)
JOIN node_splits se ON se.group_key = l.line_hour_key || 'e' AND se.piece_key = w.piece_key
JOIN node_splits sb ON sb.group_key = l.line_hour_key || 'b' AND sb.piece_key = w.piece_key
JOIN costed_node_hours nh ON nh.hostname = w.hostname AND nh.hour_ts = w.hour_ts
LEFT JOIN intermediate.int_job_allocations j ON j.day = $day AND j.job_uid = w.job_uid
LEFT JOIN intermediate.int_node_hour_energy en ON en.day = $day AND en.hostname = w.hostname AND en.hour_ts = w.hour_ts
UNION ALL
-- node-hours without GPU-seconds to split by
SELECT l.line_key, l.billing_currency, '_unallocated', '_unallocated', u.category, NULL, NULL,
       l.hostname, l.hour_ts, 'node_hour', l.effective_cost, l.billed_cost, 0, u.method, NULL, l.cost_source,
       0, 0
FROM node_line_hours l CROSS JOIN unplaced u
WHERE l.node_hour_key NOT IN (SELECT node_hour_key FROM node_hour_weights GROUP BY 1 HAVING sum(weight) > 0);
