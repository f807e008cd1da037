-- FOCUS 1.3 split-cost allocation export, step 1 of $day (DESIGN §6 `gpuledger export focus`).
-- An ORIGIN charge is a bill line's piece of $day: the sum of its hourly pieces in
-- int_bill_line_hours. Every origin is split into allocated rows whose EffectiveCost and BilledCost
-- sum to it exactly. This step builds the origins, the node lines' (line × hour) grid, the other
-- lines as the ledger placed them (int_bill_line_placements), and the first
-- largest-remainder input: prefix sums of node-hour lines and the untagged shared lines.
-- Only TEMP tables are written, so the export runs on a read-only connection.

-- the day's origin charges, with the FOCUS dimensions of the staged line (or the quarantined row)
CREATE OR REPLACE TEMP TABLE focus_origins AS
WITH pieces AS (
    SELECT line_key, bool_or(quarantined) AS quarantined,
           any_value(charge_category) AS charge_category, any_value(charge_class) AS charge_class,
           any_value(service_category) AS service_category, any_value(resource_id) AS resource_id,
           any_value(resource_type) AS resource_type,
           any_value(commitment_discount_id) AS commitment_discount_id,
           any_value(commitment_discount_status) AS commitment_discount_status,
           any_value(tags) AS tags,
           sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
           sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
           min(hour_ts) AS first_hour, max(hour_ts) AS last_hour
    FROM intermediate.int_bill_line_hours
    WHERE day = $day
    GROUP BY line_key
),
node_line_keys AS (
    SELECT DISTINCT unnest(line_keys) AS line_key FROM intermediate.int_node_hours WHERE day = $day
),
quarantined AS (
    SELECT file || '#' || row_ref AS line_key, min(charge_period_start) AS ps,
           max(greatest(coalesce(charge_period_end, charge_period_start), charge_period_start)) AS pe
    FROM ops.quarantine
    WHERE source IN ('focus', 'aws_cur') AND charge_period_start IS NOT NULL
    GROUP BY 1
)
SELECT p.*, n.line_key IS NOT NULL AS is_node_line,
       greatest(coalesce(s.charge_period_start, q.ps, p.first_hour), $day::DATE) AS charge_period_start,
       least(coalesce(s.charge_period_end, q.pe, p.last_hour + INTERVAL 1 HOUR), $day::DATE + INTERVAL 1 DAY)
           AS charge_period_end,
       s.billing_account_id, s.billing_currency, s.billing_period_start, s.billing_period_end,
       s.charge_description, s.charge_frequency, s.pricing_category, s.pricing_unit, s.consumed_unit,
       s.commitment_discount_type, s.commitment_discount_category, s.provider_name, s.invoice_id,
       s.region_id, s.resource_name, s.service_name, s.sku_id, s.sub_account_id
FROM pieces p
LEFT JOIN node_line_keys n USING (line_key)
LEFT JOIN (
    -- the staged lines overlapping $day (the ledger's own condition), so a day reads only its lines
    SELECT * FROM staging.stg_focus__bill_lines
    WHERE charge_period_start < $day::DATE + INTERVAL 1 DAY
      AND (charge_period_end > $day::DATE
           OR (charge_period_end = charge_period_start AND charge_period_start >= $day::DATE))
) s ON NOT p.quarantined AND s._file || '#' || s._row = p.line_key
LEFT JOIN quarantined q ON p.quarantined AND q.line_key = p.line_key;

-- GPU node lines: each (node-hour, line) with the running sum of the node-hour's lines (in line_key
-- order). The ledger split each node-hour's total over its GPU-seconds; splitting every prefix sum
-- the same way and differencing consecutive prefixes gives each line's pieces, which then sum
-- exactly to the line's hour piece AND to the ledger's pieces of the node-hour.
CREATE OR REPLACE TEMP TABLE focus_node_line_hours AS
WITH nh AS (
    SELECT hostname, hour_ts, unnest(line_keys) AS line_key, len(line_keys) AS n
    FROM intermediate.int_node_hours
    WHERE day = $day
),
amounts AS (
    SELECT nh.hostname, nh.hour_ts, nh.line_key, nh.n,
           row_number() OVER (PARTITION BY nh.hostname, nh.hour_ts ORDER BY nh.line_key) AS k,
           money_units(l.effective_cost) AS e_units, money_units(l.billed_cost) AS b_units
    FROM nh
    JOIN intermediate.int_bill_line_hours l ON l.day = $day AND l.line_key = nh.line_key AND l.hour_ts = nh.hour_ts
)
SELECT *,
       sum(e_units) OVER w AS e_cum, sum(b_units) OVER w AS b_cum,
       'n|' || hostname || '|' || strftime(hour_ts, '%Y-%m-%dT%H') || '|' || k AS split_key
FROM amounts
WINDOW w AS (PARTITION BY hostname, hour_ts ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);

-- the ledger's pieces of each node-hour (job × category, idle_unallocated, or unattributed) with
-- the GPU-seconds that weighed them
CREATE OR REPLACE TEMP TABLE focus_node_pieces AS
SELECT hostname, hour_ts, job_uid, category, team, project,
       coalesce(job_uid, '') || '|' || category || coalesce(':' || rerun_part, '') AS piece_key,
       sum(gpu_seconds) AS gpu_seconds,
       round(sum(gpu_seconds) * 1000)::HUGEINT AS weight,
       money_units(sum(effective_cost)) AS e_units, money_units(sum(billed_cost)) AS b_units,
       sum(round(sum(gpu_seconds) * 1000)::HUGEINT) OVER (PARTITION BY hostname, hour_ts) AS total_weight,
       row_number() OVER (PARTITION BY hostname, hour_ts ORDER BY piece_key) AS piece_rank
FROM intermediate.int_cost_allocations
WHERE day = $day AND line_kind = 'node_hour'
GROUP BY hostname, hour_ts, job_uid, category, rerun_part, team, project;

-- every other line, as the ledger placed it
CREATE OR REPLACE TEMP TABLE focus_other_lines AS
SELECT p.* FROM intermediate.int_bill_line_placements p
JOIN focus_origins o ON o.line_key = p.line_key AND NOT o.is_node_line
WHERE p.day = $day;

-- untagged shared lines go to projects in proportion to their GPU (node) cost of the day
CREATE OR REPLACE TEMP TABLE focus_project_weights AS
SELECT team, project, team || '|' || project AS piece_key,
       greatest(0, money_units(sum(effective_cost)) // 1000000000000) AS weight   -- micro-dollars
FROM intermediate.int_cost_allocations
WHERE day = $day AND line_kind = 'node_hour' AND project <> '_unallocated'
GROUP BY team, project;

CREATE OR REPLACE TEMP TABLE split_input AS
-- the prefix sums of node-hours priced by several lines (the last prefix is the ledger's own split)
SELECT l.split_key || '|' || m.measure AS group_key, p.piece_key,
       CASE m.measure WHEN 'e' THEN l.e_cum ELSE l.b_cum END::HUGEINT AS units, p.weight::HUGEINT AS weight
FROM focus_node_line_hours l
JOIN focus_node_pieces p USING (hostname, hour_ts)
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE l.k < l.n AND p.total_weight > 0
UNION ALL
SELECT 'l|' || l.line_key || '|' || m.measure, w.piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END::HUGEINT,
       w.weight::HUGEINT
FROM focus_other_lines l
CROSS JOIN focus_project_weights w
CROSS JOIN (VALUES ('e'), ('b')) m(measure)
WHERE l.placement = 'shared' AND (SELECT sum(weight) FROM focus_project_weights) > 0
