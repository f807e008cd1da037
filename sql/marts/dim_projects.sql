-- Every team and project that carries cost or jobs on the day, with its cost per billing currency.
SELECT $day::DATE AS day, team, project, billing_currency,
       count(DISTINCT job_uid) AS jobs,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost
FROM intermediate.int_cost_allocations
WHERE day = $day
GROUP BY team, project, billing_currency
