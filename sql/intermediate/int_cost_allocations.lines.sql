-- Step 2: the pieces of node-hour cost (from the split just made), then every bill line that is not
-- a node-hour, placed as int_bill_line_placements says; untagged shared lines are split next, by each
-- project's GPU cost of the day in the line's own currency.
CREATE OR REPLACE TEMP TABLE cost_pieces AS
SELECT l.line_key, l.billing_currency,
       CASE WHEN w.job_uid IS NULL THEN coalesce(nh.pool_team, '_unallocated') ELSE j.team END AS team,
       CASE WHEN w.job_uid IS NULL THEN '_unallocated' ELSE j.project END AS project,
       w.category, w.rerun_part, w.job_uid, w.hostname, w.hour_ts, 'node_hour' AS line_kind,
       units_money(se.units) AS effective_cost, units_money(sb.units) AS billed_cost,
       CASE WHEN l.carries_gpu_seconds THEN w.gpu_seconds ELSE 0 END AS gpu_seconds,
       w.gpu_seconds AS basis_quantity
FROM node_line_hours l
JOIN node_hour_weights w USING (node_hour_key)
JOIN split_output se ON se.group_key = l.line_hour_key || 'e' AND se.piece_key = w.piece_key
JOIN split_output sb ON sb.group_key = l.line_hour_key || 'b' AND sb.piece_key = w.piece_key
JOIN intermediate.int_node_hours nh ON nh.day = $day AND nh.hostname = w.hostname AND nh.hour_ts = w.hour_ts
LEFT JOIN intermediate.int_job_allocations j ON j.day = $day AND j.job_uid = w.job_uid
UNION ALL
-- node-hours without GPU-seconds to split by
SELECT l.line_key, l.billing_currency, '_unallocated', '_unallocated', 'unattributed', NULL, NULL,
       l.hostname, l.hour_ts, 'node_hour', l.effective_cost, l.billed_cost, 0, NULL
FROM node_line_hours l
WHERE l.node_hour_key NOT IN (SELECT node_hour_key FROM splittable_node_hours);

-- the day's share of every other line, placed (intermediate.int_bill_line_placements)
CREATE OR REPLACE TEMP TABLE other_lines AS
SELECT * FROM intermediate.int_bill_line_placements WHERE day = $day;

INSERT INTO cost_pieces
SELECT line_key, billing_currency, direct_team, direct_project, placement, NULL, NULL, NULL, NULL, 'line',
       effective_cost, billed_cost, 0, NULL
FROM other_lines
WHERE is_direct;

-- shared lines go to projects in proportion to their GPU (node) cost of the day, in the line's
-- currency: amounts in two currencies are never compared or added
CREATE OR REPLACE TEMP TABLE project_weights AS
SELECT billing_currency, team, project, to_json([team, project])::VARCHAR AS piece_key,
       greatest(0, money_units(sum(effective_cost)) // 1000000000000) AS weight   -- micro-units
FROM cost_pieces
WHERE line_kind = 'node_hour' AND project <> '_unallocated'
GROUP BY billing_currency, team, project;

CREATE OR REPLACE TEMP TABLE shared_currencies AS
SELECT billing_currency FROM project_weights GROUP BY 1 HAVING sum(weight) > 0;

CREATE OR REPLACE TEMP TABLE split_input AS
SELECT l.line_key || '|' || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END AS units,
       w.weight
FROM other_lines l
JOIN project_weights w USING (billing_currency)
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE l.placement = 'shared' AND l.billing_currency IN (SELECT billing_currency FROM shared_currencies)
