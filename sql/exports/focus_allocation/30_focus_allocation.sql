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
),
origins AS (
    -- names, descriptions and units as FOCUS spells them, and a ServiceSubcategory on every origin
    -- (00_focus_values.sql): once per origin, not per row. Ids stay the bill's own, to join back to it.
    SELECT * REPLACE (
        focus_ascii(billing_account_name) AS billing_account_name, focus_ascii(sub_account_name) AS sub_account_name,
        focus_ascii(charge_description) AS charge_description, focus_ascii(service_name) AS service_name,
        focus_ascii(provider_name) AS provider_name, focus_ascii(publisher_name) AS publisher_name,
        focus_ascii(invoice_issuer_name) AS invoice_issuer_name, focus_ascii(host_provider_name) AS host_provider_name,
        focus_ascii(resource_name) AS resource_name, focus_ascii(resource_type) AS resource_type,
        focus_ascii(commitment_discount_type) AS commitment_discount_type,
        focus_unit(pricing_unit) AS pricing_unit, focus_unit(consumed_unit) AS consumed_unit,
        focus_service_subcategory(service_category, service_subcategory) AS service_subcategory)
    FROM focus_origins
)
SELECT
    o.billing_account_id AS BillingAccountId,
    o.billing_account_name AS BillingAccountName,
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
    m.pricing_quantity::DECIMAL(38, 18) AS PricingQuantity,
    o.pricing_unit AS PricingUnit,
    o.pricing_currency AS PricingCurrency,
    m.consumed_quantity::DECIMAL(38, 18) AS ConsumedQuantity,
    o.consumed_unit AS ConsumedUnit,
    o.service_category AS ServiceCategory,
    o.service_subcategory AS ServiceSubcategory,
    o.service_name AS ServiceName,
    -- ProviderName (deprecated in 1.3) and ServiceProviderName, its 1.3 name, are the same entity;
    -- a bill that does not name the host provider gets the service provider, as FOCUS allows
    o.provider_name AS ProviderName,
    o.publisher_name AS PublisherName,
    o.invoice_issuer_name AS InvoiceIssuerName,
    coalesce(o.host_provider_name, o.provider_name) AS HostProviderName,
    o.provider_name AS ServiceProviderName,
    o.invoice_id AS InvoiceId,
    o.region_id AS RegionId,
    o.sub_account_id AS SubAccountId,
    o.sub_account_name AS SubAccountName,
    o.resource_id AS ResourceId,
    o.resource_name AS ResourceName,
    o.resource_type AS ResourceType,
    o.sku_id AS SkuId,
    o.commitment_discount_id AS CommitmentDiscountId,
    o.commitment_discount_type AS CommitmentDiscountType,
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
                 WHEN 'storage_bytes' THEN 'gpuledger-storage-bytes'
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
         WHEN r.basis = 'commitment_owner' AND r.team <> '_unallocated' THEN r.team
    END AS AllocatedResourceId,
    CASE WHEN r.basis = 'gpu_seconds' THEN j.job_id
         WHEN r.project IS NOT NULL AND r.project <> '_unallocated' THEN r.project
         WHEN r.basis = 'commitment_owner' AND r.team <> '_unallocated' THEN r.team
    END AS AllocatedResourceName,
    json_object('team', r.team, 'project', r.project, 'category', r.category)::VARCHAR AS AllocatedTags,
    r.line_key AS x_OriginLineKey,
    o.quarantined AS x_OriginQuarantined,
    -- where the origin came from: bill, or the config's rate_card, amortization, energy
    o.cost_source AS x_CostSource
FROM focus_pieces r
JOIN origins o USING (line_key)
LEFT JOIN piece_metrics m ON m.line_key = r.line_key AND m.piece_no = r.piece_no
LEFT JOIN jobs j ON r.basis = 'gpu_seconds' AND j.job_uid = r.resource_key
ORDER BY r.line_key, AllocatedResourceId NULLS LAST, r.category, r.team, r.project
