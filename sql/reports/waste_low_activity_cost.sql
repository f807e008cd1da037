-- The team's productive cost at low SM activity over [$start, $end], per billing currency
-- (docs/ledger.md#under-use-a-lens-on-productive-time).
SELECT billing_currency AS currency, sum(low_activity_cost)::DECIMAL(38, 18) AS low_activity_cost
FROM marts.fct_job_cost
WHERE team = $team AND day BETWEEN $start AND $end AND billing_currency IS NOT NULL
GROUP BY billing_currency
ORDER BY 1
