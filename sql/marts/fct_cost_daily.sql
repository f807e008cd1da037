-- Cost per day, team, project and category: every dollar of the day's bill, exactly once.
SELECT day, team, project, category,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds
FROM intermediate.int_cost_allocations
WHERE day = $day
GROUP BY day, team, project, category
-- pieces that carry nothing (a tax share of a team with no pre-tax cost) are not rows
HAVING sum(effective_cost) <> 0 OR sum(billed_cost) <> 0 OR sum(gpu_seconds) <> 0
