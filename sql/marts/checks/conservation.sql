-- Conservation for $day: allocated (fct_cost_daily) vs the bill's day share (int_bill_line_hours),
-- and, for lines that lie within the day, their pieces vs the landed amounts themselves.
WITH allocated AS (
    SELECT coalesce(sum(effective_cost), 0) AS e, coalesce(sum(billed_cost), 0) AS b
    FROM marts.fct_cost_daily WHERE day = $day
),
bill AS (
    SELECT coalesce(sum(effective_cost), 0) AS e, coalesce(sum(billed_cost), 0) AS b
    FROM intermediate.int_bill_line_hours WHERE day = $day
),
single_day AS (
    SELECT _file || '#' || _row AS line_key, effective_cost, billed_cost FROM staging.stg_focus__bill_lines
    WHERE charge_period_start >= $day::DATE AND charge_period_start < $day::DATE + INTERVAL 1 DAY
      AND charge_period_end <= $day::DATE + INTERVAL 1 DAY
),
single_day_pieces AS (
    SELECT coalesce(sum(effective_cost), 0) AS e, coalesce(sum(billed_cost), 0) AS b
    FROM intermediate.int_bill_line_hours WHERE day = $day AND line_key IN (SELECT line_key FROM single_day)
)
SELECT a.e, a.b, bill.e, bill.b,
       (SELECT coalesce(sum(effective_cost), 0) FROM single_day), (SELECT coalesce(sum(billed_cost), 0) FROM single_day),
       p.e, p.b
FROM allocated a, bill, single_day_pieces p
