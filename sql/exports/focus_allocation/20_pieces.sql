-- FOCUS export of $day, the second step (after the first's split): the day's origin charges — one per bill line's
-- piece of the day, with the FOCUS dimensions of the staged line (or the quarantined row), and one per
-- cost line the config generated (int_config_cost_lines: rate card, contract, depreciation, facility,
-- energy; dimensions in docs/focus-export.md#cost-lines-from-the-config) — and the ledger's allocated
-- pieces of each. The ledger keeps the origin line on every piece it allocates
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

-- the config's cost lines of $day as origin charges: their money and the hours, GPU-hours and kWh they
-- price. Nothing is invoiced for them; depreciation spreads a purchase that was paid for once, so its
-- BilledCost is 0 (FOCUS: BilledCost excludes the amortization of purchases), the others stand for what
-- is paid as it is used (a GPU cloud's rental, a facility fee, power) and bill what they cost.
CREATE OR REPLACE TEMP TABLE config_origins AS
WITH line_hours AS (
    SELECT l.line_key, any_value(l.billing_currency) AS billing_currency, any_value(l.cost_source) AS cost_source,
           any_value(l.cost_basis) AS cost_basis, any_value(l.entry_key) AS entry_key,
           -- a contract is one line over its nodes: no one node is its resource
           CASE WHEN any_value(l.cost_basis) <> 'contract' THEN any_value(l.hostname) END AS hostname,
           any_value(n.cluster) AS cluster, any_value(n.pool) AS pool,
           sum(l.effective_cost)::DECIMAL(38, 18) AS effective_cost,
           sum(l.billed_cost)::DECIMAL(38, 18) AS billed_cost,
           min(l.hour_ts) AS first_hour, max(l.hour_ts) AS last_hour,
           count(*) AS hours, coalesce(sum(n.gpu_count), 0) AS gpu_hours, sum(e.kwh) AS kwh
    FROM intermediate.int_config_cost_lines l
    LEFT JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = l.hostname
    LEFT JOIN intermediate.int_node_hour_energy e
           ON l.cost_basis = 'energy' AND e.day = $day AND e.hostname = l.hostname AND e.hour_ts = l.hour_ts
    WHERE l.day = $day
    GROUP BY l.line_key
),
described AS (
    SELECT *,
           -- the config entry, spelled as `gpuledger inspect` names it: costs.rate_cards[0], costs.owned[1]
           CASE WHEN cost_basis = 'energy' THEN 'costs.energy'
                ELSE 'costs.' || CASE json_extract_string(entry_key, '$[0]') WHEN 'rate_card' THEN 'rate_cards'
                                                                             WHEN 'contract' THEN 'contracts'
                                                                             ELSE 'owned' END
                     || '[' || json_extract_string(entry_key, '$[1]') || ']' END AS sub_account,
           -- the cluster stands for who makes the GPUs available (the GPU cloud, the on-prem site): the
           -- config names no provider
           coalesce(cluster, 'gpuledger config') AS provider,
           CASE WHEN cost_basis IN ('rate_card', 'contract') THEN 'GPU-Hours'
                WHEN cost_basis = 'energy' THEN 'kWh' ELSE 'Hours' END AS unit,
           CASE WHEN cost_basis IN ('rate_card', 'contract') THEN gpu_hours::DECIMAL(38, 18)
                WHEN cost_basis = 'energy' THEN kwh::DECIMAL(38, 18) ELSE hours::DECIMAL(38, 18) END AS quantity
    FROM line_hours
)
SELECT line_key, FALSE AS quarantined, billing_currency, cost_source, cost_basis = 'depreciation' AS zero_billed,
       'Usage' AS charge_category, NULL::VARCHAR AS charge_class, 'Compute' AS service_category,
       hostname AS resource_id, CASE WHEN hostname IS NOT NULL THEN 'GPU node' END AS resource_type,
       NULL::VARCHAR AS commitment_discount_id, NULL::VARCHAR AS commitment_discount_status,
       CASE WHEN hostname IS NOT NULL
            THEN json_object('node', hostname, 'cluster', cluster, 'pool', pool)::VARCHAR END AS tags,
       effective_cost,
       CASE WHEN cost_basis = 'depreciation' THEN 0 ELSE billed_cost END::DECIMAL(38, 18) AS billed_cost,
       first_hour, last_hour,
       greatest(first_hour, $day::DATE) AS charge_period_start,
       least(last_hour + INTERVAL 1 HOUR, $day::DATE + INTERVAL 1 DAY) AS charge_period_end,
       'gpuledger-config' AS billing_account_id, 'gpuledger config cost lines' AS billing_account_name,
       date_trunc('month', $day::DATE)::TIMESTAMP AS billing_period_start,
       date_trunc('month', $day::DATE)::TIMESTAMP + INTERVAL 1 MONTH AS billing_period_end,
       CASE cost_basis WHEN 'rate_card' THEN 'GPU-hours at a rate card'
                       WHEN 'contract' THEN 'A fixed monthly contract, over its hours'
                       WHEN 'depreciation' THEN 'Straight-line depreciation of owned hardware'
                       WHEN 'facility' THEN 'Facility cost of owned hardware per node-month'
                       ELSE 'GPU energy times PUE at the price per kWh' END AS charge_description,
       CASE WHEN cost_basis IN ('rate_card', 'energy') THEN 'Usage-Based' ELSE 'Recurring' END AS charge_frequency,
       'Standard' AS pricing_category, unit AS pricing_unit, billing_currency AS pricing_currency,
       unit AS consumed_unit,
       NULL::VARCHAR AS commitment_discount_type, NULL::VARCHAR AS commitment_discount_category,
       provider AS provider_name, provider AS host_provider_name, provider AS publisher_name,
       provider AS invoice_issuer_name,
       -- no provider invoices these lines: the id names the statement of the month's config cost lines the
       -- ledger keeps, per currency, which FOCUS allows ("InvoiceId MAY be generated prior to an invoice being
       -- issued"); a file of bill and config rows then has an InvoiceId on every invoiced row, none NULL
       'gpuledger-config-' || strftime($day::DATE, '%Y-%m') || '-' || billing_currency AS invoice_id,
       NULL::VARCHAR AS region_id, hostname AS resource_name,
       CASE cost_basis WHEN 'rate_card' THEN 'GPU rate card' WHEN 'contract' THEN 'GPU contract'
                       WHEN 'depreciation' THEN 'Owned GPU hardware' WHEN 'facility' THEN 'GPU facility'
                       ELSE 'Energy' END AS service_name,
       'Other (Compute)' AS service_subcategory, NULL::VARCHAR AS sku_id,
       sub_account AS sub_account_id, sub_account AS sub_account_name,
       -- the config's price is list and contracted price alike: no discount off it
       effective_cost AS list_cost, effective_cost AS contracted_cost,
       quantity AS pricing_quantity, quantity AS consumed_quantity
FROM described;

-- their metrics' day shares beside the bill lines': the pieces below split them the same way
INSERT INTO focus_line_day
SELECT line_key, metric, money_units(amount)
FROM (SELECT line_key, list_cost, contracted_cost, pricing_quantity, consumed_quantity FROM config_origins)
UNPIVOT (amount FOR metric IN (list_cost, contracted_cost, pricing_quantity, consumed_quantity));

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
           max(greatest(coalesce(charge_period_end, charge_period_start), charge_period_start)) AS pe,
           -- the row never reached staging, but its invoice is the bill's: its InvoiceId (FOCUS, CUR 1.0 or
           -- 2.0 spelling) keeps the row on it, as "InvoiceId MUST NOT be null when the charge is associated
           -- with either an issued invoice or a pre-generated provisional invoice" asks
           nullif(trim(any_value(coalesce(json_extract_string(raw, '$.InvoiceId'),
                                          json_extract_string(raw, '$."bill/InvoiceId"'),
                                          json_extract_string(raw, '$.bill_invoice_id')))), '') AS invoice_id
    FROM (SELECT *, CASE WHEN json_valid(payload) THEN payload END AS raw FROM ops.quarantine)
    WHERE source IN (SELECT source FROM ops.landing_sources WHERE is_bill) AND charge_period_start IS NOT NULL
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
SELECT p.*, 'bill' AS cost_source, FALSE AS zero_billed,
       greatest(coalesce(s.charge_period_start, q.ps, p.first_hour), $day::DATE) AS charge_period_start,
       least(coalesce(s.charge_period_end, q.pe, p.last_hour + INTERVAL 1 HOUR), $day::DATE + INTERVAL 1 DAY)
           AS charge_period_end,
       s.billing_account_id, s.billing_account_name, s.billing_period_start, s.billing_period_end,
       s.charge_description, s.charge_frequency, s.pricing_category, s.pricing_unit, s.pricing_currency,
       s.consumed_unit, s.commitment_discount_type, s.commitment_discount_category, s.provider_name,
       s.host_provider_name, s.publisher_name, s.invoice_issuer_name, coalesce(s.invoice_id, q.invoice_id) AS invoice_id,
       s.region_id,
       s.resource_name, s.service_name, s.service_subcategory, s.sku_id, s.sub_account_id, s.sub_account_name,
       m.list_cost, m.contracted_cost, m.pricing_quantity, m.consumed_quantity
FROM line_pieces p
LEFT JOIN (
    -- the staged lines overlapping $day (the ledger's own condition), so a day reads only its lines
    SELECT * FROM staging.stg_focus__bill_lines
    WHERE overlaps_day(charge_period_start, charge_period_end, $day)
) s ON NOT p.quarantined AND s._file || '#' || s._row = p.line_key
LEFT JOIN quarantined q ON p.quarantined AND q.line_key = p.line_key
LEFT JOIN day_metrics m ON NOT p.quarantined AND m.line_key = p.line_key
UNION ALL BY NAME
SELECT * FROM config_origins;

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
    -- a piece of a line that bills nothing (depreciation) bills nothing either
    SELECT p.* REPLACE (CASE WHEN o.zero_billed THEN 0 ELSE p.billed_cost END AS billed_cost),
           o.effective_cost AS origin_effective_cost, o.billed_cost AS origin_billed_cost,
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
