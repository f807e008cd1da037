-- Conservation for $day, per billing currency: allocated (fct_cost_daily) vs the bill's day share
-- (int_bill_line_hours), and, for lines that lie within the day, their pieces vs the landed amounts
-- themselves. One row per currency seen on either side.
WITH allocated AS (
    SELECT billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM marts.fct_cost_daily WHERE day = $day GROUP BY 1
),
bill AS (
    SELECT billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM intermediate.int_bill_line_hours WHERE day = $day GROUP BY 1
),
single_day AS (
    SELECT _file || '#' || _row AS line_key, coalesce(billing_currency, $default_currency) AS billing_currency,
           effective_cost, billed_cost
    FROM staging.stg_focus__bill_lines
    WHERE charge_period_start >= $day::DATE AND charge_period_start < $day::DATE + INTERVAL 1 DAY
      AND charge_period_end <= $day::DATE + INTERVAL 1 DAY
),
single_day_landed AS (
    SELECT billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b FROM single_day GROUP BY 1
),
single_day_pieces AS (
    SELECT billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM intermediate.int_bill_line_hours WHERE day = $day AND line_key IN (SELECT line_key FROM single_day)
    GROUP BY 1
),
currencies AS (
    SELECT billing_currency FROM allocated UNION SELECT billing_currency FROM bill
)
SELECT c.billing_currency,
       coalesce(a.e, 0) AS allocated_e, coalesce(a.b, 0) AS allocated_b,
       coalesce(bill.e, 0) AS bill_e, coalesce(bill.b, 0) AS bill_b,
       coalesce(sl.e, 0) AS single_day_e, coalesce(sl.b, 0) AS single_day_b,
       coalesce(sp.e, 0) AS single_day_pieces_e, coalesce(sp.b, 0) AS single_day_pieces_b
FROM currencies c
LEFT JOIN allocated a USING (billing_currency)
LEFT JOIN bill USING (billing_currency)
LEFT JOIN single_day_landed sl USING (billing_currency)
LEFT JOIN single_day_pieces sp USING (billing_currency)
ORDER BY c.billing_currency
