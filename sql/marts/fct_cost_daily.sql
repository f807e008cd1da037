-- Cost per day, team, project, category, currency and cost source (bill, rate_card, amortization,
-- energy): every unit of the day's cost lines — the bill's and the config's — exactly once, in the
-- currency it was billed in (two currencies are never added). kWh (facility energy, GPU energy × PUE)
-- and CO2e sit with the GPU-seconds of costed node-hours (on a node-hour's first line).
SELECT day, team, project, category, billing_currency, cost_source,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds,
       coalesce(sum(kwh), 0)::DOUBLE AS kwh,
       coalesce(sum(co2e_kg), 0)::DOUBLE AS co2e_kg
FROM intermediate.int_cost_allocations
WHERE day = $day
GROUP BY day, team, project, category, billing_currency, cost_source
-- pieces that carry nothing (a tax share of a team with no pre-tax cost) are not rows
HAVING sum(effective_cost) <> 0 OR sum(billed_cost) <> 0 OR sum(gpu_seconds) <> 0
