-- Every team's ledger over [$start, $end] per day, category and billing currency, in the row shape of
-- waste_ledger.sql (project left out) so fx.convert converts each team's total and waste.
SELECT day, team, NULL::VARCHAR AS project, category, billing_currency,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost
FROM marts.fct_cost_daily
WHERE day BETWEEN $start AND $end
GROUP BY day, team, category, billing_currency
ORDER BY team, day, category, billing_currency NULLS FIRST
