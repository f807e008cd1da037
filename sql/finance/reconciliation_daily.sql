-- Daily reconciliation: the bill (every landed line's share of the day) against what the ledger
-- allocated. `difference_*` must be 0; quarantined lines are in both, as `unattributed` in the ledger.
-- `rounding_*` is what storing the lines at 1e-18 took off: bill + rounding is the bill as written.
CREATE OR REPLACE VIEW finance.reconciliation_daily AS
WITH bill AS (
    SELECT day, sum(effective_cost) AS e, sum(billed_cost) AS b,
           sum(quarantined_effective_cost) AS qe, sum(quarantined_billed_cost) AS qb,
           sum(lines) AS lines, sum(quarantined_lines) AS quarantined_lines,
           sum(effective_cost_rounding) AS re, sum(billed_cost_rounding) AS rb
    FROM marts.fct_bill_daily GROUP BY day
),
allocated AS (
    SELECT day, sum(effective_cost) AS e, sum(billed_cost) AS b,
           coalesce(sum(effective_cost) FILTER (category = 'unattributed'), 0) AS ue
    FROM marts.fct_cost_daily GROUP BY day
)
SELECT coalesce(b.day, a.day) AS day,
       coalesce(b.e, 0) AS bill_effective_cost, coalesce(b.b, 0) AS bill_billed_cost,
       coalesce(a.e, 0) AS allocated_effective_cost, coalesce(a.b, 0) AS allocated_billed_cost,
       coalesce(b.qe, 0) AS quarantined_effective_cost, coalesce(b.qb, 0) AS quarantined_billed_cost,
       coalesce(a.ue, 0) AS unattributed_effective_cost,
       coalesce(a.e, 0) - coalesce(b.e, 0) AS difference_effective_cost,
       coalesce(a.b, 0) - coalesce(b.b, 0) AS difference_billed_cost,
       coalesce(b.lines, 0) AS bill_lines, coalesce(b.quarantined_lines, 0) AS quarantined_lines,
       coalesce(b.re, 0) AS rounding_effective_cost, coalesce(b.rb, 0) AS rounding_billed_cost
FROM bill b FULL JOIN allocated a USING (day)
