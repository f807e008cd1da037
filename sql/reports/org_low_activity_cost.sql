-- Every team's productive cost at low SM activity over [$start, $end], per billing currency and month
-- (the month picks the exchange rate): the under-use lens, docs/ledger.md#under-use-a-lens-on-productive-time.
SELECT team, billing_currency, strftime(day, '%Y-%m') AS month,
       sum(low_activity_cost)::DECIMAL(38, 18) AS low_activity_cost
FROM marts.fct_job_cost
WHERE day BETWEEN $start AND $end AND billing_currency IS NOT NULL
GROUP BY ALL
ORDER BY ALL
