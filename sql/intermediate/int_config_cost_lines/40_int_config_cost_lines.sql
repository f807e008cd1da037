-- The day's cost lines from the config (rate cards, contracts, owned hardware, energy), one row per
-- origin line, node and hour of $day, in the shape of int_bill_line_hours (an exact EffectiveCost and
-- BilledCost piece, its currency and the seconds of the hour it covers) plus where it came from:
-- `cost_source` (rate_card — rate cards and contracts —, amortization — depreciation and facility —,
-- energy), `cost_basis` (rate_card, contract, depreciation, facility, energy) and the config entry
-- (`entry_key`: [kind, index in its list]). The ledger splits them like bill lines (int_cost_allocations).
SELECT $day::DATE AS day, line_key, cost_source, cost_basis, entry_key, hostname, hour_ts,
       units_money(units)::DECIMAL(38, 18) AS effective_cost,
       units_money(units)::DECIMAL(38, 18) AS billed_cost,
       currency AS billing_currency,
       3600.0::DOUBLE AS covered_seconds,
       strftime(hour_ts, '%Y-%m') AS invoice_month,
       priced_gpu_kwh
FROM config_node_hours
