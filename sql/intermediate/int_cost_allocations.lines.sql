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

-- the day's share of every other line, one row per line
CREATE OR REPLACE TEMP TABLE other_lines AS
WITH node_line_keys AS (
    SELECT DISTINCT unnest(line_keys) AS line_key FROM intermediate.int_node_hours WHERE day = $day
),
commitment_owners AS (
    -- a commitment belongs to the team owning the pool whose nodes it covered
    SELECT l.commitment_discount_id, min(nh.pool_team) AS team, count(DISTINCT nh.pool_team) AS teams
    FROM intermediate.int_bill_line_hours l
    JOIN (SELECT hostname, hour_ts, pool_team, unnest(line_keys) AS line_key
          FROM intermediate.int_node_hours WHERE day = $day) nh USING (line_key)
    WHERE l.day = $day AND l.commitment_discount_id IS NOT NULL AND nh.pool_team IS NOT NULL
    GROUP BY 1
),
lines AS (
    SELECT line_key, any_value(quarantined) AS quarantined, any_value(charge_category) AS charge_category,
           any_value(service_category) AS service_category, any_value(resource_id) AS resource_id,
           any_value(resource_type) AS resource_type, any_value(commitment_discount_id) AS commitment_discount_id,
           any_value(commitment_discount_status) AS commitment_discount_status, any_value(tags) AS tags,
           sum(effective_cost) AS effective_cost, sum(billed_cost) AS billed_cost
    FROM intermediate.int_bill_line_hours
    WHERE day = $day AND line_key NOT IN (SELECT line_key FROM node_line_keys)
    GROUP BY line_key
)
SELECT l.*, tag_value(l.tags, $project_keys) AS tag_project, tag_value(l.tags, $team_keys) AS tag_team,
       co.team AS commitment_team, coalesce(co.teams, 0) AS commitment_teams,
       CASE
         WHEN l.quarantined THEN 'unattributed'
         WHEN l.commitment_discount_status = 'Unused' THEN 'unused_commitment'
         WHEN l.charge_category = 'Tax' THEN 'tax'
         WHEN l.charge_category = 'Credit' THEN 'credit'
         WHEN tag_value(l.tags, $project_keys) IS NOT NULL THEN
              CASE l.service_category WHEN 'Storage' THEN 'storage' WHEN 'Networking' THEN 'network'
                                      WHEN 'Compute' THEN 'compute_other' ELSE 'other' END
         -- an instance of no known node, without a project: nobody to charge
         WHEN tag_value(l.tags, $node_keys) IS NOT NULL OR lower(coalesce(l.resource_type, '')) LIKE '%instance%'
              THEN 'unattributed'
         ELSE 'shared'
       END AS placement
FROM lines l
LEFT JOIN commitment_owners co USING (commitment_discount_id);

INSERT INTO cost_pieces
SELECT CASE placement
         WHEN 'unused_commitment' THEN coalesce(CASE WHEN commitment_teams = 1 THEN commitment_team END, tag_team,
                                                '_unallocated')
         WHEN 'unattributed' THEN '_unallocated'
         ELSE coalesce(config_lookup($project_teams, tag_project), tag_team, tag_project)
       END AS team,
       CASE WHEN placement IN ('unused_commitment', 'unattributed') THEN '_unallocated' ELSE tag_project END AS project,
       placement AS category, NULL, NULL, NULL, NULL, 'line', effective_cost, billed_cost, 0
FROM other_lines
WHERE placement IN ('unused_commitment', 'unattributed')
   OR (placement IN ('storage', 'network', 'compute_other', 'other'))
   OR (placement = 'credit' AND tag_project IS NOT NULL);

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
