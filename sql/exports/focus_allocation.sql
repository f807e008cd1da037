-- FOCUS 1.3 split-cost allocation rows of $day, read from the ledger: one row per origin charge (a
-- bill line's piece of the day) and allocated piece, carrying the origin's dimensions. The ledger
-- keeps the origin line on every piece it allocates (intermediate.int_cost_allocations), so the rows of
-- an origin sum exactly to it by construction; the unallocated portion (idle GPUs, unattributed
-- lines, shares of `_unallocated`) has a NULL AllocatedResourceId. Pieces that carry nothing are left
-- out unless the origin has no other row.
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
origins AS (
    -- the day's origin charges, with the FOCUS dimensions of the staged line (or the quarantined row)
    SELECT p.*,
           greatest(coalesce(s.charge_period_start, q.ps, p.first_hour), $day::DATE) AS charge_period_start,
           least(coalesce(s.charge_period_end, q.pe, p.last_hour + INTERVAL 1 HOUR), $day::DATE + INTERVAL 1 DAY)
               AS charge_period_end,
           s.billing_account_id, s.billing_period_start, s.billing_period_end,
           s.charge_description, s.charge_frequency, s.pricing_category, s.pricing_unit, s.consumed_unit,
           s.commitment_discount_type, s.commitment_discount_category, s.provider_name, s.invoice_id,
           s.region_id, s.resource_name, s.service_name, s.sku_id, s.sub_account_id
    FROM line_pieces p
    LEFT JOIN (
        -- the staged lines overlapping $day (the ledger's own condition), so a day reads only its lines
        SELECT * FROM staging.stg_focus__bill_lines
        WHERE overlaps_day(charge_period_start, charge_period_end, $day)
    ) s ON NOT p.quarantined AND s._file || '#' || s._row = p.line_key
    LEFT JOIN quarantined q ON p.quarantined AND q.line_key = p.line_key
),
allocated AS (
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
    JOIN origins o USING (line_key)
),
kept AS (
    SELECT * FROM pieces
    QUALIFY carries
         OR (count(*) FILTER (carries) OVER (PARTITION BY line_key) = 0
             AND row_number() OVER (PARTITION BY line_key ORDER BY category, team, project, resource_key) = 1)
),
ratios AS (
    SELECT *,
           CASE WHEN origin_effective_cost <> 0 THEN effective_cost::DOUBLE / origin_effective_cost::DOUBLE
                WHEN origin_billed_cost <> 0 THEN billed_cost::DOUBLE / origin_billed_cost::DOUBLE
                WHEN sum(coalesce(usage_quantity, 0)) OVER (PARTITION BY line_key) > 0
                     THEN coalesce(usage_quantity, 0) / sum(coalesce(usage_quantity, 0)) OVER (PARTITION BY line_key)
                ELSE 1.0 / count(*) OVER (PARTITION BY line_key) END AS ratio
    FROM kept
),
jobs AS (
    SELECT job_uid, any_value(job_id) AS job_id FROM intermediate.int_job_allocations WHERE day = $day GROUP BY job_uid
)
SELECT
    o.billing_account_id AS BillingAccountId,
    o.billing_currency AS BillingCurrency,
    o.billing_period_start AS BillingPeriodStart,
    o.billing_period_end AS BillingPeriodEnd,
    o.charge_period_start AS ChargePeriodStart,
    o.charge_period_end AS ChargePeriodEnd,
    o.charge_category AS ChargeCategory,
    o.charge_class AS ChargeClass,
    o.charge_description AS ChargeDescription,
    o.charge_frequency AS ChargeFrequency,
    o.pricing_category AS PricingCategory,
    o.pricing_unit AS PricingUnit,
    o.consumed_unit AS ConsumedUnit,
    o.service_category AS ServiceCategory,
    o.service_name AS ServiceName,
    o.provider_name AS ProviderName,
    o.provider_name AS HostProviderName,
    o.provider_name AS ServiceProviderName,
    o.invoice_id AS InvoiceId,
    o.region_id AS RegionId,
    o.sub_account_id AS SubAccountId,
    o.resource_id AS ResourceId,
    o.resource_name AS ResourceName,
    o.resource_type AS ResourceType,
    o.sku_id AS SkuId,
    o.commitment_discount_id AS CommitmentDiscountId,
    o.commitment_discount_type AS CommitmentDiscountType,
    o.commitment_discount_category AS CommitmentDiscountCategory,
    o.commitment_discount_status AS CommitmentDiscountStatus,
    o.tags AS Tags,
    r.effective_cost::DECIMAL(38, 18) AS EffectiveCost,
    r.billed_cost::DECIMAL(38, 18) AS BilledCost,
    CASE r.basis WHEN 'gpu_seconds' THEN 'gpuledger-gpu-seconds'
                 WHEN 'tag' THEN 'gpuledger-tag'
                 WHEN 'gpu_cost' THEN 'gpuledger-proportional-gpu-cost'
                 WHEN 'project_gpu_seconds' THEN 'gpuledger-proportional-gpu-seconds'
                 WHEN 'pretax_cost' THEN 'gpuledger-proportional-pretax'
                 WHEN 'commitment_owner' THEN 'gpuledger-commitment-owner'
                 ELSE 'gpuledger-unattributed' END AS AllocatedMethodId,
    CASE WHEN r.basis IN ('gpu_seconds', 'project_gpu_seconds')
         THEN json_object('Elements', json_array(json_object(
                  'AllocatedRatio', r.ratio, 'UsageUnit', 'GPU-Hours', 'UsageQuantity', r.usage_quantity / 3600)))
         WHEN r.basis IN ('gpu_cost', 'pretax_cost')
         THEN json_object('Elements', json_array(json_object(
                  'AllocatedRatio', r.ratio, 'UsageUnit', o.billing_currency,
                  'UsageQuantity', r.usage_quantity)))
         ELSE json_object('Elements', json_array(json_object('AllocatedRatio', r.ratio)))
    END::VARCHAR AS AllocatedMethodDetails,
    CASE WHEN r.basis = 'gpu_seconds' THEN r.resource_key
         WHEN r.project IS NOT NULL AND r.project <> '_unallocated' THEN r.project
         WHEN r.category = 'unused_commitment' AND r.team <> '_unallocated' THEN r.team
    END AS AllocatedResourceId,
    CASE WHEN r.basis = 'gpu_seconds' THEN j.job_id
         WHEN r.project IS NOT NULL AND r.project <> '_unallocated' THEN r.project
         WHEN r.category = 'unused_commitment' AND r.team <> '_unallocated' THEN r.team
    END AS AllocatedResourceName,
    json_object('team', r.team, 'project', r.project, 'category', r.category)::VARCHAR AS AllocatedTags,
    r.line_key AS x_OriginLineKey,
    o.quarantined AS x_OriginQuarantined
FROM ratios r
JOIN origins o USING (line_key)
LEFT JOIN jobs j ON r.basis = 'gpu_seconds' AND j.job_uid = r.resource_key
ORDER BY r.line_key, AllocatedResourceId NULLS LAST, r.category, r.team, r.project
