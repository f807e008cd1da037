-- FOCUS export, step 3 of $day: the pieces of tax and untagged credit lines (split by pre-tax cost
-- just now), or one `unattributed` piece each on a day with no pre-tax cost to spread them by.
INSERT INTO focus_pieces
WITH taxed AS (
    -- group_key = 'l|' || line_key || '|' || measure
    SELECT substr(group_key, 3, length(group_key) - 4) AS line_key, right(group_key, 1) AS measure, piece_key, units
    FROM split_output
)
SELECT l.line_key, NULL, l.placement, w.team, w.project, 'pretax_cost',
       units_money(sum(t.units) FILTER (t.measure = 'e')), units_money(sum(t.units) FILTER (t.measure = 'b')),
       any_value(w.weight)::DOUBLE / 1e6
FROM taxed t
JOIN focus_other_lines l USING (line_key)
JOIN focus_pretax_weights w ON w.piece_key = t.piece_key
WHERE (SELECT sum(weight) FROM focus_pretax_weights) > 0
GROUP BY l.line_key, l.placement, w.team, w.project;

INSERT INTO focus_pieces
SELECT line_key, NULL, 'unattributed', '_unallocated', '_unallocated', 'unattributed', effective_cost, billed_cost, NULL
FROM focus_other_lines
WHERE (placement = 'tax' OR (placement = 'credit' AND tag_project IS NULL))
  AND coalesce((SELECT sum(weight) FROM focus_pretax_weights), 0) = 0
