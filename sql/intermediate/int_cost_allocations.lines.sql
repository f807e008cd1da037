-- Step 2: the pieces of node-hour cost (from the split just made), then every bill line that is not
-- a node-hour, placed by DESIGN §3; untagged shared lines are split next, by each project's GPU cost.
CREATE OR REPLACE TEMP TABLE cost_pieces AS
WITH node_split AS (
    SELECT string_split(group_key, '|') AS g, piece_key, units FROM split_output
),
split AS (
    SELECT g[1] AS hostname, g[2] AS hour_key, piece_key,
           sum(units) FILTER (g[3] = 'e') AS e_units, sum(units) FILTER (g[3] = 'b') AS b_units
    FROM node_split GROUP BY ALL
)
SELECT CASE WHEN w.job_uid IS NULL THEN coalesce(nh.pool_team, '_unallocated') ELSE j.team END AS team,
       CASE WHEN w.job_uid IS NULL THEN '_unallocated' ELSE j.project END AS project,
       w.category, w.rerun_part, w.job_uid, w.hostname, w.hour_ts, 'node_hour' AS line_kind,
       units_money(s.e_units) AS effective_cost, units_money(s.b_units) AS billed_cost, w.gpu_seconds
FROM split s
JOIN node_hour_weights w ON w.hostname = s.hostname AND strftime(w.hour_ts, '%Y-%m-%dT%H') = s.hour_key
                        AND w.piece_key = s.piece_key
JOIN intermediate.int_node_hours nh ON nh.day = $day AND nh.hostname = w.hostname AND nh.hour_ts = w.hour_ts
LEFT JOIN intermediate.int_job_allocations j ON j.day = $day AND j.job_uid = w.job_uid
UNION ALL
-- node-hours without GPU-seconds to split by
SELECT '_unallocated', '_unallocated', 'unattributed', NULL, NULL, nh.hostname, nh.hour_ts, 'node_hour',
       nh.effective_cost, nh.billed_cost, 0
FROM intermediate.int_node_hours nh
WHERE nh.day = $day AND (nh.hostname || '|' || strftime(nh.hour_ts, '%Y-%m-%dT%H')) NOT IN
      (SELECT node_hour_key FROM node_hour_weights GROUP BY 1 HAVING sum(weight) > 0);

-- the day's share of every other line, placed (intermediate.int_bill_line_placements)
CREATE OR REPLACE TEMP TABLE other_lines AS
SELECT * FROM intermediate.int_bill_line_placements WHERE day = $day;

INSERT INTO cost_pieces
SELECT direct_team, direct_project, placement, NULL, NULL, NULL, NULL, 'line', effective_cost, billed_cost, 0
FROM other_lines
WHERE is_direct;

-- shared lines go to projects in proportion to their GPU (node) cost of the day
CREATE OR REPLACE TEMP TABLE project_weights AS
SELECT team, project, team || '|' || project AS piece_key,
       greatest(0, money_units(sum(effective_cost)) // 1000000000000) AS weight   -- micro-dollars
FROM cost_pieces
WHERE line_kind = 'node_hour' AND project <> '_unallocated'
GROUP BY team, project;

CREATE OR REPLACE TEMP TABLE split_input AS
SELECT l.line_key || '|' || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END AS units,
       w.weight
FROM other_lines l
CROSS JOIN project_weights w
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE l.placement = 'shared' AND (SELECT sum(weight) FROM project_weights) > 0
