-- The badput of each run, part 2: each run job's productive cost per host, hour and currency (its
-- node-hour pieces of every line), split over the kind weights of 10_phase_weights.sql with the one
-- exact split, for EffectiveCost and BilledCost.
CREATE OR REPLACE TEMP TABLE badput_productive_cost AS
SELECT c.job_uid, j.run_id, c.hostname, c.hour_ts, c.billing_currency,
       c.job_uid || '|' || c.hostname || '|' || CAST(c.hour_ts AS VARCHAR) || '|' || c.billing_currency AS cost_key,
       sum(c.effective_cost) AS effective_cost, sum(c.billed_cost) AS billed_cost
FROM intermediate.int_cost_allocations c JOIN badput_jobs j USING (job_uid)
WHERE c.day = $day AND c.line_kind = 'node_hour' AND c.job_uid IS NOT NULL
  AND c.category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_gpu AND NOT is_waste)   -- productive: the GPU time that is no waste
GROUP BY c.job_uid, j.run_id, c.hostname, c.hour_ts, c.billing_currency;

CREATE OR REPLACE TEMP TABLE badput_split_input AS
SELECT m.measure || c.cost_key AS group_key, w.kind AS piece_key,
       CASE m.measure WHEN 'e' THEN money_units(c.effective_cost) ELSE money_units(c.billed_cost) END AS units,
       w.weight
FROM badput_productive_cost c
JOIN badput_weights w ON w.job_uid = c.job_uid AND w.hostname = c.hostname AND w.hour_ts = c.hour_ts
CROSS JOIN (VALUES ('e'), ('b')) m(measure);

CREATE OR REPLACE TEMP TABLE badput_splits AS FROM split_exactly('badput_split_input');

-- each productive cost piece's share per kind, EffectiveCost and BilledCost side by side, so the query
-- joins them by one key (two joins of the splits by expressions let DuckDB join them by kind first:
-- 836M rows on a 512-node day)
CREATE OR REPLACE TEMP TABLE badput_kind_costs AS
SELECT c.run_id, c.billing_currency, s.piece_key AS kind,
       units_money(sum(s.units) FILTER (s.measure = 'e')) AS effective_cost,
       units_money(sum(s.units) FILTER (s.measure = 'b')) AS billed_cost
FROM badput_productive_cost c
-- a split's group is its measure (e, b) and its piece's cost_key
JOIN (SELECT substr(group_key, 1, 1) AS measure, substr(group_key, 2) AS cost_key, piece_key, units
      FROM badput_splits) s
  ON s.cost_key = c.cost_key
GROUP BY c.run_id, c.billing_currency, s.piece_key
