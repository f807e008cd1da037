-- The cost lines the ledger splits over node-hours, whatever their source (docs/ledger.md#cost-sources):
-- the bill's node lines (int_node_hours: instance lines matched to a node by ResourceId or node tag) and
-- the config's lines (int_config_cost_lines: rate cards, contracts, owned hardware, energy, generated per
-- node). A node-hour has lines of one kind only: the config takes no node-hour a bill line covers. Both
-- go through the same weights and the same exact split below, each piece keeping its origin line, its
-- currency and its cost_source.
CREATE OR REPLACE TEMP TABLE costed_node_hours AS
SELECT hostname, hour_ts, gpu_count, billed_seconds::DOUBLE AS billed_seconds, pool_team
FROM intermediate.int_node_hours WHERE day = $day
UNION ALL
SELECT c.hostname, c.hour_ts, coalesce(n.gpu_count, 0), 3600.0, n.pool_team
FROM (SELECT DISTINCT hostname, hour_ts FROM intermediate.int_config_cost_lines
      WHERE day = $day AND hostname IS NOT NULL) c
JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = c.hostname;

CREATE OR REPLACE TEMP TABLE node_cost_lines AS
SELECT nh.hostname, nh.hour_ts, l.line_key, 'bill' AS cost_source, l.billing_currency, l.effective_cost, l.billed_cost
FROM (SELECT hostname, hour_ts, unnest(line_keys) AS line_key
      FROM intermediate.int_node_hours WHERE day = $day) nh
JOIN intermediate.int_bill_line_hours l ON l.day = $day AND l.line_key = nh.line_key AND l.hour_ts = nh.hour_ts
UNION ALL
SELECT hostname, hour_ts, line_key, cost_source, billing_currency, effective_cost, billed_cost
FROM intermediate.int_config_cost_lines
WHERE day = $day AND hostname IS NOT NULL;

-- the categories pieces are given by what they are, not by name (marts.dim_ledger_categories; each is one
-- category, models/ledger_categories.py asserts it): where cost that cannot be placed goes, with its
-- allocation as the piece's method, and GPU time no job held
CREATE OR REPLACE TEMP TABLE unplaced AS
SELECT name AS category, allocation AS method FROM marts.dim_ledger_categories WHERE is_unplaced;

CREATE OR REPLACE TEMP TABLE unheld AS
SELECT name AS category FROM marts.dim_ledger_categories WHERE is_gpu AND precedence IS NULL;
