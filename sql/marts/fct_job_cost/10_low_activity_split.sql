-- Each job's productive cost of each node-hour, per currency, split exactly (largest remainder) into its
-- low-activity part and the rest by their GPU-seconds (share-unit milliseconds), so the low-activity cost
-- is priced at the hours it happened in and the two parts always add up to the productive cost.
CREATE OR REPLACE TEMP TABLE productive_hours AS
SELECT job_uid, hostname, hour_ts, sum(gpu_share_ms) AS gpu_share_ms,
       sum(low_activity_share_ms) AS low_activity_share_ms
FROM intermediate.int_gpu_seconds
WHERE day = $day AND category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_gpu AND NOT is_waste)   -- productive: the GPU time that is no waste
GROUP BY job_uid, hostname, hour_ts;

CREATE OR REPLACE TEMP TABLE productive_cost AS
SELECT job_uid, hostname, hour_ts, billing_currency,
       to_json([job_uid, hostname, strftime(hour_ts, '%Y-%m-%dT%H'), billing_currency])::VARCHAR AS group_key,
       sum(effective_cost) AS effective_cost, sum(billed_cost) AS billed_cost
FROM intermediate.int_cost_allocations
WHERE day = $day AND category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_gpu AND NOT is_waste) AND job_uid IS NOT NULL
GROUP BY job_uid, hostname, hour_ts, billing_currency;

CREATE OR REPLACE TEMP TABLE low_activity_split_input AS
SELECT c.group_key || m.measure AS group_key, p.part AS piece_key,
       CASE m.measure WHEN 'e' THEN money_units(c.effective_cost) ELSE money_units(c.billed_cost) END AS units,
       CASE p.part WHEN 'low' THEN h.low_activity_share_ms ELSE h.gpu_share_ms - h.low_activity_share_ms END AS weight
FROM productive_cost c
JOIN productive_hours h USING (job_uid, hostname, hour_ts)
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
CROSS JOIN (VALUES ('low'), ('rest')) p(part);

CREATE OR REPLACE TEMP TABLE low_activity_splits AS FROM split_exactly('low_activity_split_input');

CREATE OR REPLACE TEMP TABLE low_activity_cost AS
SELECT c.job_uid, c.billing_currency,
       sum(units_money(se.units)) AS low_activity_cost, sum(units_money(sb.units)) AS low_activity_billed_cost
FROM productive_cost c
JOIN low_activity_splits se ON se.group_key = c.group_key || 'e' AND se.piece_key = 'low'
JOIN low_activity_splits sb ON sb.group_key = c.group_key || 'b' AND sb.piece_key = 'low'
GROUP BY c.job_uid, c.billing_currency
