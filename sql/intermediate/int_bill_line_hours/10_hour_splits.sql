-- Every bill line overlapping the day $day — staged, or quarantined with money — cut into the hours
-- of its charge period, weighted by microseconds of overlap. A line is cut over all its hours (not
-- just this day's), so every day's run splits it the same way and its pieces sum to the line.
-- Zero-length lines (a point in time) fall wholly in the hour of their start.
CREATE OR REPLACE TEMP TABLE bill_lines_of_day AS
SELECT _file || '#' || _row AS line_key, FALSE AS quarantined, charge_period_start AS ps,
       charge_period_end AS pe, effective_cost, billed_cost, effective_cost_rounding, billed_cost_rounding,
       coalesce(billing_currency, $default_currency) AS billing_currency, charge_category, charge_class,
       service_category, resource_id, resource_type, commitment_discount_id,
       commitment_discount_status, tags,
       -- the invoice month: the billing period's, else the month the charge starts in
       strftime(coalesce(billing_period_start, charge_period_start), '%Y-%m') AS invoice_month
FROM staging.stg_focus__bill_lines
WHERE overlaps_day(charge_period_start, charge_period_end, $day)
UNION ALL
-- Quarantined bill rows keep their money and land as `unattributed`; rows whose period did not
-- parse cannot be dated and are reported by reconciliation instead.
SELECT file || '#' || row_ref, TRUE, charge_period_start,
       greatest(coalesce(charge_period_end, charge_period_start), charge_period_start),
       coalesce(effective_cost, 0), coalesce(billed_cost, 0),
       coalesce(effective_cost_rounding, 0), coalesce(billed_cost_rounding, 0), coalesce(billing_currency, $default_currency),
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       strftime(charge_period_start, '%Y-%m')
FROM ops.quarantine
WHERE source IN (SELECT source FROM ops.landing_sources WHERE is_bill) AND charge_period_start IS NOT NULL
  AND overlaps_day(charge_period_start, greatest(coalesce(charge_period_end, charge_period_start), charge_period_start), $day);

CREATE OR REPLACE TEMP TABLE bill_hour_split_input AS FROM hour_split_input('bill_lines_of_day');

-- the hourly pieces of every line, exactly
CREATE OR REPLACE TEMP TABLE hour_splits AS FROM split_exactly('bill_hour_split_input');
