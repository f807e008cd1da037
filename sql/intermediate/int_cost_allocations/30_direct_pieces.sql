-- Every bill line that is not a node-hour, as int_bill_line_placements placed it; those that go to one
-- place (tagged lines, unused commitment, unattributed) are pieces as they are.
CREATE OR REPLACE TEMP TABLE other_lines AS
SELECT * FROM intermediate.int_bill_line_placements WHERE day = $day;

INSERT INTO cost_pieces
SELECT line_key, billing_currency, direct_team, direct_project, placement, NULL, NULL, NULL, NULL, 'line',
       effective_cost, billed_cost, 0,
       CASE placement WHEN 'unused_commitment' THEN 'commitment_owner' WHEN 'unattributed' THEN 'unattributed'
                      ELSE 'tag' END,
       NULL
FROM other_lines
WHERE is_direct;
