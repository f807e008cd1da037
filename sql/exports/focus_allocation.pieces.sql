-- FOCUS export, step 2 of $day: the allocated pieces of every origin so far (GPU node lines from the
-- prefix splits, directly placed lines, shared lines), then the input of the tax and untagged credit
-- split: each team and project's pre-tax cost of the day, as the ledger weighs it.
CREATE OR REPLACE TEMP TABLE focus_pieces AS
WITH grid AS (
    SELECT l.hostname, l.hour_ts, l.line_key, l.k, l.n, l.e_cum, l.b_cum, l.split_key,
           p.piece_key, p.job_uid, p.category, p.team, p.project, p.gpu_seconds, p.total_weight, p.piece_rank,
           p.e_units AS ledger_e, p.b_units AS ledger_b
    FROM focus_node_line_hours l
    JOIN focus_node_pieces p USING (hostname, hour_ts)
),
prefix AS (
    -- each piece's share of the running sum of lines 1..k of its node-hour
    SELECT g.*,
           CASE WHEN g.k = g.n THEN g.ledger_e
                WHEN g.total_weight > 0 THEN coalesce(se.units, 0)
                WHEN g.piece_rank = 1 THEN g.e_cum ELSE 0 END::HUGEINT AS e_prefix,
           CASE WHEN g.k = g.n THEN g.ledger_b
                WHEN g.total_weight > 0 THEN coalesce(sb.units, 0)
                WHEN g.piece_rank = 1 THEN g.b_cum ELSE 0 END::HUGEINT AS b_prefix
    FROM grid g
    LEFT JOIN split_output se ON se.group_key = g.split_key || '|e' AND se.piece_key = g.piece_key
    LEFT JOIN split_output sb ON sb.group_key = g.split_key || '|b' AND sb.piece_key = g.piece_key
),
node_pieces AS (
    SELECT line_key, job_uid, category, team, project, gpu_seconds,
           e_prefix - lag(e_prefix, 1, 0::HUGEINT) OVER w AS e_units,
           b_prefix - lag(b_prefix, 1, 0::HUGEINT) OVER w AS b_units
    FROM prefix
    WINDOW w AS (PARTITION BY hostname, hour_ts, piece_key ORDER BY k)
),
shared AS (
    -- group_key = 'l|' || line_key || '|' || measure
    SELECT substr(group_key, 3, length(group_key) - 4) AS line_key, right(group_key, 1) AS measure, piece_key, units
    FROM split_output
    WHERE group_key LIKE 'l|%'
)
SELECT line_key, job_uid AS resource_key, category, team, project, 'gpu_seconds' AS basis,
       units_money(sum(e_units)) AS effective_cost, units_money(sum(b_units)) AS billed_cost,
       sum(gpu_seconds)::DOUBLE AS usage_quantity
FROM node_pieces
GROUP BY line_key, job_uid, category, team, project
UNION ALL
SELECT line_key, NULL, placement,
       direct_team, direct_project,
       CASE WHEN placement = 'unused_commitment' THEN 'commitment_owner'
            WHEN placement = 'unattributed' THEN 'unattributed' ELSE 'tag' END,
       effective_cost, billed_cost, NULL
FROM focus_other_lines
WHERE is_direct
UNION ALL
SELECT l.line_key, NULL, 'shared', w.team, w.project, 'gpu_cost',
       units_money(sum(s.units) FILTER (s.measure = 'e')), units_money(sum(s.units) FILTER (s.measure = 'b')),
       any_value(w.weight)::DOUBLE / 1e6
FROM shared s
JOIN focus_other_lines l USING (line_key)
JOIN focus_project_weights w ON w.piece_key = s.piece_key
GROUP BY l.line_key, w.team, w.project
UNION ALL
-- shared lines on a day with no GPU cost to share by
SELECT line_key, NULL, 'unattributed', '_unallocated', '_unallocated', 'unattributed', effective_cost, billed_cost, NULL
FROM focus_other_lines
WHERE placement = 'shared' AND coalesce((SELECT sum(weight) FROM focus_project_weights), 0) = 0;

-- tax and untagged credits: in proportion to each team and project's pre-tax cost of the day (the
-- ledger's node-hour pieces plus the line pieces placed so far)
CREATE OR REPLACE TEMP TABLE focus_pretax_weights AS
WITH pretax AS (
    SELECT team, project, effective_cost FROM intermediate.int_cost_allocations
    WHERE day = $day AND line_kind = 'node_hour'
    UNION ALL
    SELECT p.team, p.project, p.effective_cost FROM focus_pieces p
    JOIN focus_origins o USING (line_key)
    WHERE NOT o.is_node_line
)
SELECT team, project, team || '|' || project AS piece_key,
       greatest(0, money_units(sum(effective_cost)) // 1000000000000) AS weight   -- micro-dollars
FROM pretax
GROUP BY team, project;

CREATE OR REPLACE TEMP TABLE split_input AS
SELECT 'l|' || l.line_key || '|' || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END::HUGEINT AS units,
       w.weight::HUGEINT AS weight
FROM focus_other_lines l
CROSS JOIN focus_pretax_weights w
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE (l.placement = 'tax' OR (l.placement = 'credit' AND l.tag_project IS NULL))
  AND (SELECT sum(weight) FROM focus_pretax_weights) > 0
