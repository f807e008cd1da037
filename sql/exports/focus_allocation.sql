-- FOCUS 1.3 split-cost allocation rows of $day (after the .prepare, .pieces and .taxes steps): one
-- row per origin charge (a bill line's piece of the day) and allocated piece, carrying the origin's
-- dimensions. EffectiveCost and BilledCost of an origin's rows sum exactly to the origin; the
-- unallocated portion (idle GPUs, unattributed lines, shares of `_unallocated`) has a NULL
-- AllocatedResourceId. Pieces that carry nothing are left out unless the origin has no other row.
WITH pieces AS (
    SELECT p.*, o.effective_cost AS origin_effective_cost, o.billed_cost AS origin_billed_cost,
           p.effective_cost <> 0 OR p.billed_cost <> 0 OR coalesce(p.usage_quantity, 0) <> 0 AS carries
    FROM focus_pieces p
    JOIN focus_origins o USING (line_key)
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
                 WHEN 'pretax_cost' THEN 'gpuledger-proportional-pretax'
                 WHEN 'commitment_owner' THEN 'gpuledger-commitment-owner'
                 ELSE 'gpuledger-unattributed' END AS AllocatedMethodId,
    CASE WHEN r.basis = 'gpu_seconds'
         THEN json_object('Elements', json_array(json_object(
                  'AllocatedRatio', r.ratio, 'UsageUnit', 'GPU-Hours', 'UsageQuantity', r.usage_quantity / 3600)))
         WHEN r.basis IN ('gpu_cost', 'pretax_cost')
         THEN json_object('Elements', json_array(json_object(
                  'AllocatedRatio', r.ratio, 'UsageUnit', coalesce(o.billing_currency, 'USD'),
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
JOIN focus_origins o USING (line_key)
LEFT JOIN jobs j ON r.basis = 'gpu_seconds' AND j.job_uid = r.resource_key
ORDER BY r.line_key, AllocatedResourceId NULLS LAST, r.category, r.team, r.project
