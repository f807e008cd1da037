-- Tax and untagged credits go to teams and projects in proportion to their pre-tax cost of the day in
-- the line's currency; where that currency has no pre-tax cost that day, the line is `unattributed`.
-- Pre-tax cost is the bill's (cost_source `bill`): a bill's tax is not spread over config-costed fleets.
CREATE OR REPLACE TEMP TABLE pretax_weights AS
SELECT billing_currency, team, project, to_json([team, project])::VARCHAR AS piece_key,
       micro_units(sum(effective_cost)) AS weight
FROM cost_pieces
WHERE cost_source = 'bill'
GROUP BY billing_currency, team, project;

CREATE OR REPLACE TEMP TABLE tax_split_input AS
SELECT l.line_key || '|' || m.measure AS group_key, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END AS units,
       w.weight
FROM other_lines l
JOIN pretax_weights w USING (billing_currency)
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE l.allocation = 'pretax_cost';

CREATE OR REPLACE TEMP TABLE tax_splits AS FROM split_exactly('tax_split_input');

CREATE OR REPLACE TEMP TABLE tax_pieces AS
SELECT l.line_key, l.billing_currency, w.team, w.project, l.placement AS category,
       units_money(se.units) AS effective_cost, units_money(sb.units) AS billed_cost,
       'pretax_cost' AS method, w.weight / 1e6 AS basis_quantity
FROM other_lines l
JOIN pretax_weights w USING (billing_currency)
JOIN tax_splits se ON se.group_key = l.line_key || '|e' AND se.piece_key = w.piece_key
JOIN tax_splits sb ON sb.group_key = l.line_key || '|b' AND sb.piece_key = w.piece_key
WHERE l.allocation = 'pretax_cost'
UNION ALL
SELECT line_key, billing_currency, '_unallocated', '_unallocated', u.category, effective_cost, billed_cost,
       u.method, NULL
FROM other_lines CROSS JOIN unplaced u
WHERE allocation = 'pretax_cost'
  AND line_key || '|e' NOT IN (SELECT group_key FROM tax_splits);
