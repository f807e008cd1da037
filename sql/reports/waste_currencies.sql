-- The currencies the team was billed in over [$start, $end], in order: the report has a section for
-- each, and rows without a currency (a job or run with no billed cost) go with the first.
SELECT DISTINCT billing_currency
FROM marts.fct_cost_daily
WHERE team = $team AND day BETWEEN $start AND $end AND billing_currency IS NOT NULL
ORDER BY billing_currency
