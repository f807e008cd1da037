-- Every bill line that is not a node-hour, as int_bill_line_placements placed it; those that go to one
-- place (tagged lines, unused commitment, unattributed) are pieces as they are. The storage lines of a
-- store with an inventory are not among them: they go by the store's objects, below.
CREATE OR REPLACE TEMP TABLE other_lines AS
SELECT * FROM intermediate.int_bill_line_placements
WHERE day = $day
  AND line_key NOT IN (SELECT line_key FROM intermediate.int_storage_costs WHERE day = $day AND priced_by = 'bill');

-- A storage line of an inventoried store goes to the projects of the store's objects, in proportion to
-- their bytes (int_storage_costs splits it exactly), as category `storage` (the category the line rules
-- place a project's Storage line in), in place of its tag project or `shared`
-- (docs/ingest/storage.md#allocation).
INSERT INTO cost_pieces
-- One value, never a join: a second matching rule cannot count a line twice, and none leaves the
-- category null for the checks to stop, rather than dropping the line's money.
SELECT line_key, billing_currency, team, project,
       (SELECT category FROM intermediate.ref_line_placements
        WHERE service_category = 'Storage' AND project_tagged ORDER BY ord LIMIT 1),
       NULL, NULL, NULL, NULL, 'line',
       sum(effective_cost), sum(billed_cost), 0, 'storage_bytes', sum(bytes)::DOUBLE, 'bill', 0, 0
FROM intermediate.int_storage_costs
WHERE day = $day AND priced_by = 'bill'
GROUP BY line_key, billing_currency, team, project;

INSERT INTO cost_pieces
SELECT line_key, billing_currency, direct_team, direct_project, placement, NULL, NULL, NULL, NULL, 'line',
       effective_cost, billed_cost, 0, allocation, NULL, 'bill', 0, 0
FROM other_lines
WHERE is_direct;

-- a config line piece with no node to carry it (a contract hour none of its nodes was there for)
INSERT INTO cost_pieces
SELECT line_key, billing_currency, '_unallocated', '_unallocated', u.category, NULL, NULL, NULL, hour_ts, 'line',
       effective_cost, billed_cost, 0, u.method, NULL, cost_source, 0, 0
FROM intermediate.int_config_cost_lines CROSS JOIN unplaced u
WHERE day = $day AND hostname IS NULL;
