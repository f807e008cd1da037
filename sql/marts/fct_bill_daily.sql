-- The bill as landed, per day, invoice month and currency: each line's exact day share (staged and
-- quarantined lines apart). What reconciliation compares the ledger to.
SELECT day, invoice_month, billing_currency,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
       -- what rounding the day's lines to 1e-18 took off: the bill as written is the sum of both
       coalesce(sum(effective_cost_rounding), 0)::DECIMAL(38, 38) AS effective_cost_rounding,
       coalesce(sum(billed_cost_rounding), 0)::DECIMAL(38, 38) AS billed_cost_rounding,
       coalesce(sum(effective_cost) FILTER (quarantined), 0)::DECIMAL(38, 18) AS quarantined_effective_cost,
       coalesce(sum(billed_cost) FILTER (quarantined), 0)::DECIMAL(38, 18) AS quarantined_billed_cost,
       count(DISTINCT line_key) AS lines,
       count(DISTINCT line_key) FILTER (quarantined) AS quarantined_lines
FROM intermediate.int_bill_line_hours
WHERE day = $day
GROUP BY day, invoice_month, billing_currency
