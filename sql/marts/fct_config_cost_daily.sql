-- The cost lines the config generated, per day, invoice month, currency, cost source and basis (rate
-- card, contract, depreciation, facility, energy): what reconciliation compares the ledger to beside the
-- bill (marts.fct_bill_daily stays the bill as landed). `priced_kwh` is the facility energy the energy
-- lines priced (GPU kWh × PUE).
SELECT day, invoice_month, billing_currency, cost_source, cost_basis,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
       count(DISTINCT line_key) AS lines,
       count(DISTINCT hostname) AS nodes,
       (coalesce(sum(priced_gpu_kwh), 0)::DOUBLE * $energy_pue::DOUBLE)::DOUBLE AS priced_kwh
FROM intermediate.int_config_cost_lines
WHERE day = $day
GROUP BY day, invoice_month, billing_currency, cost_source, cost_basis
