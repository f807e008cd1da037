-- Step 3: the shared lines' pieces (or `unattributed` on a day with no GPU cost to share by), then
-- tax and untagged credits split in proportion to each team and project's pre-tax cost of the day.
INSERT INTO cost_pieces
SELECT w.team, w.project, 'shared', NULL, NULL, NULL, NULL, 'line',
       units_money(sum(s.units) FILTER (string_split(s.group_key, '|')[-1] = 'e')),
       units_money(sum(s.units) FILTER (string_split(s.group_key, '|')[-1] = 'b')), 0
FROM split_output s
JOIN project_weights w USING (piece_key)
WHERE (SELECT sum(weight) FROM project_weights) > 0
GROUP BY w.team, w.project;

INSERT INTO cost_pieces
SELECT '_unallocated', '_unallocated', 'unattributed', NULL, NULL, NULL, NULL, 'line', effective_cost, billed_cost, 0
FROM other_lines
WHERE placement = 'shared' AND coalesce((SELECT sum(weight) FROM project_weights), 0) = 0;

CREATE OR REPLACE TEMP TABLE pretax_weights AS
SELECT team, project, team || '|' || project AS piece_key,
       greatest(0, money_units(sum(effective_cost)) // 1000000000000) AS weight   -- micro-dollars
FROM cost_pieces
GROUP BY team, project;

CREATE OR REPLACE TEMP TABLE split_input AS
SELECT l.line_key || '|' || l.placement || '|' || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END AS units,
       w.weight
FROM other_lines l
CROSS JOIN pretax_weights w
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE (l.placement = 'tax' OR (l.placement = 'credit' AND l.tag_project IS NULL))
  AND (SELECT sum(weight) FROM pretax_weights) > 0
