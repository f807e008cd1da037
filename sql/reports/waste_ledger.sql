-- The CSV: the team's ledger rows over [$start, $end] at the mart's own grain (day x project x
-- category x billing currency), exact DECIMAL money. Summed per currency, they give that currency's
-- total cost to the last digit; the currency is the mart's own (empty where it has none).
SELECT day, team, project, category, billing_currency,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost
FROM marts.fct_cost_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY day, team, project, category, billing_currency
ORDER BY day, project, category, billing_currency NULLS FIRST
