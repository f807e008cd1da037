-- Untagged shared lines go to projects in proportion to their GPU (node) cost of the day in the line's
-- currency (amounts in two currencies are never compared or added), or with `shared_cost_rule:
-- gpu_seconds` to their GPU-seconds on nodes billed in that currency; where the line's currency has
-- nothing to share by that day, the line is `unattributed`. Only bill-costed node-hours weigh: a bill's
-- shared lines (support, network) belong to what that bill paid for, not to config-costed fleets.
CREATE OR REPLACE TEMP TABLE project_weights AS
SELECT billing_currency, team, project, to_json([team, project])::VARCHAR AS piece_key,
       CASE $shared_cost_rule WHEN 'gpu_seconds' THEN round(sum(gpu_seconds))::HUGEINT
                              ELSE micro_units(sum(effective_cost)) END AS weight
FROM cost_pieces
WHERE line_kind = 'node_hour' AND project <> '_unallocated' AND cost_source = 'bill'
GROUP BY billing_currency, team, project;

CREATE OR REPLACE TEMP TABLE shared_split_input AS
SELECT l.line_key || '|' || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END AS units,
       w.weight
FROM other_lines l
JOIN project_weights w USING (billing_currency)
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE l.allocation = 'gpu_weight';

CREATE OR REPLACE TEMP TABLE shared_splits AS FROM split_exactly('shared_split_input');

INSERT INTO cost_pieces
SELECT l.line_key, l.billing_currency, w.team, w.project, l.placement, NULL, NULL, NULL, NULL, 'line',
       units_money(se.units), units_money(sb.units), 0,
       CASE $shared_cost_rule WHEN 'gpu_seconds' THEN 'project_gpu_seconds' ELSE 'gpu_cost' END,
       CASE $shared_cost_rule WHEN 'gpu_seconds' THEN w.weight ELSE w.weight / 1e6 END, 'bill', 0, 0
FROM other_lines l
JOIN project_weights w USING (billing_currency)
JOIN shared_splits se ON se.group_key = l.line_key || '|e' AND se.piece_key = w.piece_key
JOIN shared_splits sb ON sb.group_key = l.line_key || '|b' AND sb.piece_key = w.piece_key
WHERE l.allocation = 'gpu_weight';

INSERT INTO cost_pieces
SELECT line_key, billing_currency, '_unallocated', '_unallocated', u.category, NULL, NULL, NULL, NULL, 'line',
       effective_cost, billed_cost, 0, u.method, NULL, 'bill', 0, 0
FROM other_lines CROSS JOIN unplaced u
WHERE allocation = 'gpu_weight'
  AND line_key || '|e' NOT IN (SELECT group_key FROM shared_splits);
