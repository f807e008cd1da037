-- Per store and currency, the day's bill-priced storage rows against the storage lines they came from
-- (intermediate.int_bill_line_placements): equal, exactly, for EffectiveCost and BilledCost.
WITH lines AS (
    SELECT DISTINCT line_key, store FROM intermediate.int_storage_costs WHERE day = $day AND priced_by = 'bill'
),
billed AS (
    SELECT l.store, p.billing_currency, sum(p.effective_cost) AS effective_cost, sum(p.billed_cost) AS billed_cost
    FROM lines l JOIN intermediate.int_bill_line_placements p ON p.day = $day AND p.line_key = l.line_key
    GROUP BY ALL
),
placed AS (
    SELECT store, billing_currency, sum(effective_cost) AS effective_cost, sum(billed_cost) AS billed_cost
    FROM marts.fct_storage_daily WHERE day = $day AND priced_by = 'bill'
    GROUP BY ALL
)
SELECT coalesce(b.store, p.store) AS store, coalesce(b.billing_currency, p.billing_currency) AS billing_currency,
       coalesce(p.effective_cost, 0) AS placed_effective_cost, coalesce(b.effective_cost, 0) AS lines_effective_cost,
       coalesce(p.billed_cost, 0) AS placed_billed_cost, coalesce(b.billed_cost, 0) AS lines_billed_cost
FROM billed b FULL JOIN placed p USING (store, billing_currency)
ORDER BY 1, 2
