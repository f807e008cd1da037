-- Cost per day, team, project, category, currency and cost source: every unit of the day's bill,
-- exactly once, in the currency it was billed in (two currencies are never added).
SELECT day, team, project, category, billing_currency, cost_source,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds
FROM intermediate.int_cost_allocations
WHERE day = $day
GROUP BY day, team, project, category, billing_currency, cost_source
-- pieces that carry nothing (a tax share of a team with no pre-tax cost) are not rows
HAVING sum(effective_cost) <> 0 OR sum(billed_cost) <> 0 OR sum(gpu_seconds) <> 0
