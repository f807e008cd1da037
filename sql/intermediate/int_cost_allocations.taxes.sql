-- Step 3: the shared lines' pieces (or `unattributed` where the line's currency has no GPU cost that
-- day to share by), then tax and untagged credits split in proportion to each team and project's
-- pre-tax cost of the day in the line's currency.
INSERT INTO cost_pieces
SELECT l.line_key, l.billing_currency, w.team, w.project, 'shared', NULL, NULL, NULL, NULL, 'line',
       units_money(se.units), units_money(sb.units), 0, w.weight / 1e6
FROM other_lines l
JOIN project_weights w USING (billing_currency)
JOIN split_output se ON se.group_key = l.line_key || '|e' AND se.piece_key = w.piece_key
JOIN split_output sb ON sb.group_key = l.line_key || '|b' AND sb.piece_key = w.piece_key
WHERE l.placement = 'shared';

INSERT INTO cost_pieces
SELECT line_key, billing_currency, '_unallocated', '_unallocated', 'unattributed', NULL, NULL, NULL, NULL, 'line',
       effective_cost, billed_cost, 0, NULL
FROM other_lines
WHERE placement = 'shared' AND billing_currency NOT IN (SELECT billing_currency FROM shared_currencies);

CREATE OR REPLACE TEMP TABLE pretax_weights AS
SELECT billing_currency, team, project, to_json([team, project])::VARCHAR AS piece_key,
       greatest(0, money_units(sum(effective_cost)) // 1000000000000) AS weight   -- micro-units
FROM cost_pieces
GROUP BY billing_currency, team, project;

CREATE OR REPLACE TEMP TABLE taxed_currencies AS
SELECT billing_currency FROM pretax_weights GROUP BY 1 HAVING sum(weight) > 0;

CREATE OR REPLACE TEMP TABLE split_input AS
SELECT l.line_key || '|' || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END AS units,
       w.weight
FROM other_lines l
JOIN pretax_weights w USING (billing_currency)
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE (l.placement = 'tax' OR (l.placement = 'credit' AND l.tag_project IS NULL))
  AND l.billing_currency IN (SELECT billing_currency FROM taxed_currencies)
