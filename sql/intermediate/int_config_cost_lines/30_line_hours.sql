-- The config's lines cut into hours exactly as bill lines are (hour_split_input + split_exactly: by
-- time, largest remainder, so a month's pieces sum to its amount), keeping $day's hours. A node-hour a
-- bill line covers takes no piece (the bill wins). A contract's hour is shared by the GPUs of its nodes
-- that hour, exactly (largest remainder by GPU count); an hour none of its nodes is there for keeps its
-- piece without a node, which the ledger places as `unattributed`: the contract is owed all the same.
CREATE OR REPLACE TEMP TABLE config_lines_in AS
SELECT line_key, ps, pe, amount AS effective_cost, amount AS billed_cost FROM config_lines;

-- the lines' EffectiveCost and BilledCost are the same amount: one split serves both
CREATE OR REPLACE TEMP TABLE config_hour_split_input AS
FROM hour_split_input('config_lines_in') WHERE group_key LIKE '%|e';

CREATE OR REPLACE TEMP TABLE config_hour_splits AS
FROM split_exactly('config_hour_split_input')
WHERE piece_key >= strftime($day::DATE, '%Y-%m-%dT%H')
  AND piece_key < strftime($day::DATE + INTERVAL 1 DAY, '%Y-%m-%dT%H');

CREATE OR REPLACE TEMP TABLE config_day_hours AS
SELECT l.line_key, l.cost_source, l.cost_basis, l.entry_key, l.hostname, l.currency, l.priced_gpu_kwh,
       strptime(s.piece_key, '%Y-%m-%dT%H') AS hour_ts, s.units
FROM config_lines l
JOIN config_hour_splits s ON s.group_key = l.line_key || '|e'
ANTI JOIN bill_covered_node_hours b ON b.hostname = l.hostname AND b.hour_ts = strptime(s.piece_key, '%Y-%m-%dT%H');

-- each contract hour over the GPUs of the contract's nodes that no bill covers that hour
CREATE OR REPLACE TEMP TABLE contract_node_split_input AS
SELECT to_json([h.line_key, strftime(h.hour_ts, '%Y-%m-%dT%H')])::VARCHAR AS group_key, c.hostname AS piece_key,
       h.units, c.gpu_count AS weight
FROM config_day_hours h
JOIN node_costing c ON c.entry_key = h.entry_key AND c.gpu_count > 0
ANTI JOIN bill_covered_node_hours b ON b.hostname = c.hostname AND b.hour_ts = h.hour_ts
WHERE h.cost_basis = 'contract';

CREATE OR REPLACE TEMP TABLE contract_node_splits AS FROM split_exactly('contract_node_split_input');

CREATE OR REPLACE TEMP TABLE config_node_hours AS
SELECT line_key, cost_source, cost_basis, entry_key, hostname, currency, priced_gpu_kwh, hour_ts, units
FROM config_day_hours
WHERE cost_basis <> 'contract'
UNION ALL
SELECT h.line_key, h.cost_source, h.cost_basis, h.entry_key, s.piece_key, h.currency, NULL, h.hour_ts, s.units
FROM config_day_hours h
JOIN contract_node_splits s ON s.group_key = to_json([h.line_key, strftime(h.hour_ts, '%Y-%m-%dT%H')])::VARCHAR
WHERE h.cost_basis = 'contract'
UNION ALL
-- contract hours with no node to carry them
SELECT h.line_key, h.cost_source, h.cost_basis, h.entry_key, NULL, h.currency, NULL, h.hour_ts, h.units
FROM config_day_hours h
WHERE h.cost_basis = 'contract'
  AND to_json([h.line_key, strftime(h.hour_ts, '%Y-%m-%dT%H')])::VARCHAR
      NOT IN (SELECT group_key FROM contract_node_splits);
