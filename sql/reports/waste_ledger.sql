-- The CSV: the team's ledger rows over [$start, $end] at the mart's own grain (day x project x
-- category), exact DECIMAL money. Summed, they give the report's total cost to the last digit.
SELECT day, team, project, category,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost
FROM marts.fct_cost_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY day, team, project, category
ORDER BY day, project, category
