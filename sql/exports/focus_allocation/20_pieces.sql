-- FOCUS export of $day, the second step (after the first's split): the day's origin charges — one per bill line's
-- piece of the day, with the FOCUS dimensions of the staged line (or the quarantined row) — and the
-- ledger's allocated pieces of each. The ledger keeps the origin line on every piece it allocates
-- (intermediate.int_cost_allocations), so EffectiveCost and BilledCost of an origin's pieces sum to it
-- by construction. Its other summable metrics (the first step's day shares) are split here over the same
-- pieces in proportion to their EffectiveCost (their BilledCost where the origin's EffectiveCost is
-- 0, their usage where both are, else evenly), by largest remainder, so they sum exactly to the
-- origin's too: FOCUS 1.3 split cost allocation asks the summable metrics of allocated charges (costs
-- and quantities) to sum to the origin charge, and dimensions and unit prices to match it.

-- each line's share of $day of the first step's metrics, in units of 1e-18
CREATE OR REPLACE TEMP TABLE focus_line_day AS
SELECT substr(group_key, strpos(group_key, '|') + 1) AS line_key, split_part(group_key, '|', 1) AS metric,
       sum(units) AS units
FROM metric_splits
WHERE piece_key >= strftime($day::DATE, '%Y-%m-%dT%H')
  AND piece_key < strftime($day::DATE + INTERVAL 1 DAY, '%Y-%m-%dT%H')
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE focus_origins AS
WITH line_pieces AS (
    SELECT line_key, bool_or(quarantined) AS quarantined,
           any_value(billing_currency) AS billing_currency,
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
quarantined AS (
    SELECT file || '#' || row_ref AS line_key, min(charge_period_start) AS ps,
           max(greatest(coalesce(charge_period_end, charge_period_start), charge_period_start)) AS pe
    FROM ops.quarantine
    WHERE source IN ('focus', 'aws_cur') AND charge_period_start IS NOT NULL
    GROUP BY 1
),
day_metrics AS (
    SELECT line_key,
           units_money(sum(units) FILTER (WHERE metric = 'list_cost')) AS list_cost,
           units_money(sum(units) FILTER (WHERE metric = 'contracted_cost')) AS contracted_cost,
           units_money(sum(units) FILTER (WHERE metric = 'pricing_quantity')) AS pricing_quantity,
           units_money(sum(units) FILTER (WHERE metric = 'consumed_quantity')) AS consumed_quantity
    FROM focus_line_day
    GROUP BY line_key
)
SELECT p.*,
       greatest(coalesce(s.charge_period_start, q.ps, p.first_hour), $day::DATE) AS charge_period_start,
       least(coalesce(s.charge_period_end, q.pe, p.last_hour + INTERVAL 1 HOUR), $day::DATE + INTERVAL 1 DAY)
           AS charge_period_end,
       s.billing_account_id, s.billing_account_name, s.billing_period_start, s.billing_period_end,
       s.charge_description, s.charge_frequency, s.pricing_category, s.pricing_unit, s.pricing_currency,
       s.consumed_unit, s.commitment_discount_type, s.commitment_discount_category, s.provider_name,
       s.host_provider_name, s.publisher_name, s.invoice_issuer_name, s.invoice_id, s.region_id,
       s.resource_name, s.service_name, s.service_subcategory, s.sku_id, s.sub_account_id, s.sub_account_name,
       m.list_cost, m.contracted_cost, m.pricing_quantity, m.consumed_quantity
FROM line_pieces p
LEFT JOIN (
    -- the staged lines overlapping $day (the ledger's own condition), so a day reads only its lines
    SELECT * FROM staging.stg_focus__bill_lines
    WHERE overlaps_day(charge_period_start, charge_period_end, $day)
) s ON NOT p.quarantined AND s._file || '#' || s._row = p.line_key
LEFT JOIN quarantined q ON p.quarantined AND q.line_key = p.line_key
LEFT JOIN day_metrics m ON NOT p.quarantined AND m.line_key = p.line_key;

CREATE OR REPLACE TEMP TABLE focus_pieces AS
WITH allocated AS (
    -- the ledger's pieces of each origin, with the method that placed them
    SELECT a.line_key, a.job_uid AS resource_key, a.category, a.team, a.project, a.method AS basis,
           sum(a.effective_cost) AS effective_cost, sum(a.billed_cost) AS billed_cost,
           sum(a.basis_quantity) AS usage_quantity
    FROM intermediate.int_cost_allocations a
    WHERE a.day = $day
    GROUP BY ALL
),
pieces AS (
    SELECT p.*, o.effective_cost AS origin_effective_cost, o.billed_cost AS origin_billed_cost,
           p.effective_cost <> 0 OR p.billed_cost <> 0 OR coalesce(p.usage_quantity, 0) <> 0 AS carries
    FROM allocated p
    JOIN focus_origins o USING (line_key)
),
kept AS (
    -- pieces that carry nothing are left out unless the origin has no other
    SELECT * FROM pieces
    QUALIFY carries
         OR (count(*) FILTER (carries) OVER (PARTITION BY line_key) = 0
             AND row_number() OVER (PARTITION BY line_key ORDER BY category, team, project, resource_key) = 1)
),
bases AS (
    -- what the origin's other metrics are split by: the pieces' EffectiveCost in units (all of one
    -- sign, the origin's), else BilledCost, else usage (in millionths), else evenly
    SELECT *, abs(money_units(effective_cost)) AS by_effective, abs(money_units(billed_cost)) AS by_billed,
           round(greatest(coalesce(usage_quantity, 0), 0) * 1000000)::HUGEINT AS by_usage,
           row_number() OVER (PARTITION BY line_key ORDER BY category, team, project, resource_key) AS piece_no
    FROM kept
),
chosen AS (
    SELECT *, CASE WHEN sum(by_effective) OVER origin > 0 THEN by_effective
                   WHEN sum(by_billed) OVER origin > 0 THEN by_billed
                   WHEN sum(by_usage) OVER origin > 0 THEN by_usage
                   ELSE 1 END AS basis_units,
              -- the pieces' own signed amount of a cost basis (NULL for usage or even)
              CASE WHEN sum(by_effective) OVER origin > 0 THEN money_units(effective_cost)
                   WHEN sum(by_billed) OVER origin > 0 THEN money_units(billed_cost) END AS basis_amount
    FROM bases
    WINDOW origin AS (PARTITION BY line_key)
)
SELECT *,
       -- scaled so an origin's weights sum to at most 1e18, within what the split takes (the
       -- proportion is kept to 1e-18 of the origin)
       basis_units // greatest(1, (sum(basis_units) OVER origin + 999999999999999999) // 1000000000000000000)
           AS weight,
       -- a metric equal to the basis' total splits exactly as the basis did (ContractedCost equal to
       -- EffectiveCost gives every piece its EffectiveCost), which the scaled weights would miss by
       -- units of 1e-18
       sum(basis_amount) OVER origin AS basis_total,
       CASE WHEN origin_effective_cost <> 0 THEN effective_cost::DOUBLE / origin_effective_cost::DOUBLE
            WHEN origin_billed_cost <> 0 THEN billed_cost::DOUBLE / origin_billed_cost::DOUBLE
            WHEN sum(coalesce(usage_quantity, 0)) OVER (PARTITION BY line_key) > 0
                 THEN coalesce(usage_quantity, 0) / sum(coalesce(usage_quantity, 0)) OVER (PARTITION BY line_key)
            ELSE 1.0 / count(*) OVER (PARTITION BY line_key) END AS ratio
FROM chosen
WINDOW origin AS (PARTITION BY line_key);

CREATE OR REPLACE TEMP TABLE piece_split_input AS
SELECT d.metric || '|' || p.line_key AS group_key, lpad(p.piece_no::VARCHAR, 12, '0') AS piece_key,
       d.units, p.weight
FROM focus_pieces p
JOIN focus_line_day d USING (line_key)
WHERE d.units IS DISTINCT FROM p.basis_total;;

-- the origin's other metrics over its pieces, exactly
CREATE OR REPLACE TEMP TABLE piece_splits AS FROM split_exactly('piece_split_input');
