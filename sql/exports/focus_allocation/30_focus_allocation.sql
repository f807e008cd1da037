-- FOCUS 1.3 split-cost allocation rows of $day, read from the ledger: one row per origin charge (a
-- bill line's or a config cost line's piece of the day) and allocated piece (20_pieces.sql), carrying the origin's
-- dimensions. Every summable metric of an origin's rows sums exactly to the origin's: EffectiveCost
-- and BilledCost as the ledger allocated them, ListCost, ContractedCost, PricingQuantity and
-- ConsumedQuantity as 20_pieces.sql split them (this query reads that split's output). The unallocated
-- portion (idle GPUs, unattributed lines, shares of `_unallocated`) has a NULL AllocatedResourceId.
WITH piece_metric AS (
    -- each piece's share of each of its origin's split metrics: 20_pieces.sql's split, or the basis' own
    -- amount where the metric equals the basis' total
    SELECT p.line_key, p.piece_no, d.metric,
           CASE WHEN d.units = p.basis_total THEN p.basis_amount ELSE s.units END AS units
    FROM focus_pieces p
    JOIN focus_line_day d USING (line_key)
    LEFT JOIN piece_splits s ON s.group_key = d.metric || '|' || p.line_key
                            AND s.piece_key = lpad(p.piece_no::VARCHAR, 12, '0')
),
piece_metrics AS (
    SELECT line_key, piece_no,
           units_money(sum(units) FILTER (WHERE metric = 'list_cost')) AS list_cost,
           units_money(sum(units) FILTER (WHERE metric = 'contracted_cost')) AS contracted_cost,
           units_money(sum(units) FILTER (WHERE metric = 'pricing_quantity')) AS pricing_quantity,
           units_money(sum(units) FILTER (WHERE metric = 'consumed_quantity')) AS consumed_quantity
    FROM piece_metric
    GROUP BY ALL
),
jobs AS (
    SELECT job_uid, any_value(job_id) AS job_id FROM intermediate.int_job_allocations WHERE day = $day GROUP BY job_uid
)
SELECT
    -- names, descriptions and units as FOCUS spells them (00_focus_values.sql; ids stay the bill's own, to
    -- join back to it), a ServiceSubcategory on every row
    o.billing_account_id AS BillingAccountId,
    focus_ascii(o.billing_account_name) AS BillingAccountName,
    o.billing_currency AS BillingCurrency,
    o.billing_period_start AS BillingPeriodStart,
    o.billing_period_end AS BillingPeriodEnd,
    o.charge_period_start AS ChargePeriodStart,
    o.charge_period_end AS ChargePeriodEnd,
    o.charge_category AS ChargeCategory,
    o.charge_class AS ChargeClass,
    focus_ascii(o.charge_description) AS ChargeDescription,
    o.charge_frequency AS ChargeFrequency,
    o.pricing_category AS PricingCategory,
    m.pricing_quantity::DECIMAL(38, 18) AS PricingQuantity,
    focus_unit(o.pricing_unit) AS PricingUnit,
    o.pricing_currency AS PricingCurrency,
    m.consumed_quantity::DECIMAL(38, 18) AS ConsumedQuantity,
    focus_unit(o.consumed_unit) AS ConsumedUnit,
    o.service_category AS ServiceCategory,
    focus_service_subcategory(o.service_category, o.service_subcategory) AS ServiceSubcategory,
    focus_ascii(o.service_name) AS ServiceName,
    -- ProviderName (deprecated in 1.3) and ServiceProviderName, its 1.3 name, are the same entity;
    -- a bill that does not name the host provider gets the service provider, as FOCUS allows
    focus_ascii(o.provider_name) AS ProviderName,
    focus_ascii(o.publisher_name) AS PublisherName,
    focus_ascii(o.invoice_issuer_name) AS InvoiceIssuerName,
    focus_ascii(coalesce(o.host_provider_name, o.provider_name)) AS HostProviderName,
    focus_ascii(o.provider_name) AS ServiceProviderName,
    o.invoice_id AS InvoiceId,
    o.region_id AS RegionId,
    o.sub_account_id AS SubAccountId,
    focus_ascii(o.sub_account_name) AS SubAccountName,
    o.resource_id AS ResourceId,
    focus_ascii(o.resource_name) AS ResourceName,
    focus_ascii(o.resource_type) AS ResourceType,
    o.sku_id AS SkuId,
    o.commitment_discount_id AS CommitmentDiscountId,
    focus_ascii(o.commitment_discount_type) AS CommitmentDiscountType,
    o.commitment_discount_category AS CommitmentDiscountCategory,
    o.commitment_discount_status AS CommitmentDiscountStatus,
    o.tags AS Tags,
    m.list_cost::DECIMAL(38, 18) AS ListCost,
    m.contracted_cost::DECIMAL(38, 18) AS ContractedCost,
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
    o.quarantined AS x_OriginQuarantined,
    -- where the origin came from: bill, or the config's rate_card, amortization, energy
    o.cost_source AS x_CostSource
FROM focus_pieces r
JOIN focus_origins o USING (line_key)
LEFT JOIN piece_metrics m ON m.line_key = r.line_key AND m.piece_no = r.piece_no
LEFT JOIN jobs j ON r.basis = 'gpu_seconds' AND j.job_uid = r.resource_key
ORDER BY r.line_key, AllocatedResourceId NULLS LAST, r.category, r.team, r.project
