-- Conservation for $day, per billing currency and cost source: allocated (fct_cost_daily) vs the cost
-- lines' day share — the bill's (int_bill_line_hours, cost_source `bill`) and the config's
-- (int_config_cost_lines, rate_card, amortization, energy) —, and, for bill lines that lie within the
-- day, their pieces vs the landed amounts themselves. One row per currency and source seen on either side.
WITH allocated AS (
    SELECT billing_currency, cost_source, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM marts.fct_cost_daily WHERE day = $day GROUP BY 1, 2
),
bill AS (
    SELECT billing_currency, 'bill' AS cost_source, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM intermediate.int_bill_line_hours WHERE day = $day GROUP BY 1
    UNION ALL
    SELECT billing_currency, cost_source, sum(effective_cost), sum(billed_cost)
    FROM intermediate.int_config_cost_lines WHERE day = $day GROUP BY 1, 2
),
single_day AS (
    SELECT _file || '#' || _row AS line_key, coalesce(billing_currency, $default_currency) AS billing_currency,
           effective_cost, billed_cost
    FROM staging.stg_focus__bill_lines
    WHERE charge_period_start >= $day::DATE AND charge_period_start < $day::DATE + INTERVAL 1 DAY
      AND charge_period_end <= $day::DATE + INTERVAL 1 DAY
),
single_day_landed AS (
    SELECT billing_currency, 'bill' AS cost_source, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM single_day GROUP BY 1
),
single_day_pieces AS (
    SELECT billing_currency, 'bill' AS cost_source, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM intermediate.int_bill_line_hours WHERE day = $day AND line_key IN (SELECT line_key FROM single_day)
    GROUP BY 1
),
currencies AS (
    SELECT billing_currency, cost_source FROM allocated UNION SELECT billing_currency, cost_source FROM bill
)
SELECT c.billing_currency, c.cost_source,
       coalesce(a.e, 0) AS allocated_e, coalesce(a.b, 0) AS allocated_b,
       coalesce(bill.e, 0) AS bill_e, coalesce(bill.b, 0) AS bill_b,
       coalesce(sl.e, 0) AS single_day_e, coalesce(sl.b, 0) AS single_day_b,
       coalesce(sp.e, 0) AS single_day_pieces_e, coalesce(sp.b, 0) AS single_day_pieces_b
FROM currencies c
LEFT JOIN allocated a USING (billing_currency, cost_source)
LEFT JOIN bill USING (billing_currency, cost_source)
LEFT JOIN single_day_landed sl USING (billing_currency, cost_source)
LEFT JOIN single_day_pieces sp USING (billing_currency, cost_source)
ORDER BY c.billing_currency, c.cost_source
