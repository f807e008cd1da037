-- Daily reconciliation per billing currency: the cost lines — the bill (every landed line's share of the
-- day) and those the config generated (`config_*`: rate cards, contracts, owned hardware, energy) —
-- against what the ledger allocated. `difference_*` (allocated − bill − config) must be 0; quarantined
-- lines are in both, as `unattributed` in the ledger. Amounts in different currencies are never added:
-- one row each.
-- `rounding_*` is what storing the lines at 1e-18 took off: bill + rounding is the bill as written.
CREATE OR REPLACE VIEW finance.reconciliation_daily AS
WITH bill AS (
    SELECT day, billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b,
           sum(quarantined_effective_cost) AS qe, sum(quarantined_billed_cost) AS qb,
           sum(lines) AS lines, sum(quarantined_lines) AS quarantined_lines,
           sum(effective_cost_rounding) AS re, sum(billed_cost_rounding) AS rb
    FROM marts.fct_bill_daily GROUP BY day, billing_currency
),
config AS (
    SELECT day, billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM marts.fct_config_cost_daily GROUP BY day, billing_currency
),
costed AS (
    -- the bill and the config's lines side by side, per day and currency
    SELECT coalesce(b.day, c.day) AS day, coalesce(b.billing_currency, c.billing_currency) AS billing_currency,
           b.e, b.b, b.qe, b.qb, b.lines, b.quarantined_lines, b.re, b.rb, c.e AS ce, c.b AS cb
    FROM bill b FULL JOIN config c ON c.day = b.day AND c.billing_currency = b.billing_currency
),
allocated AS (
    SELECT day, billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b,
           coalesce(sum(effective_cost) FILTER (category = 'unattributed'), 0) AS ue
    FROM marts.fct_cost_daily GROUP BY day, billing_currency
),
-- Bill files that could not be read hold money nobody can see: each makes the days its name (or its
-- manifest) says it covers incomplete, and one whose name says no day makes every day incomplete.
unreadable_bill_files AS (
    SELECT file, first_day, last_day FROM ops.landed_files WHERE status = 'unreadable'
),
unreadable AS (
    SELECT d.day, count(*) AS n, list(u.file ORDER BY u.file) AS files
    FROM (SELECT day FROM costed UNION SELECT day FROM allocated
          UNION SELECT unnest(generate_series(first_day, last_day, INTERVAL 1 DAY))::DATE FROM unreadable_bill_files
          WHERE first_day IS NOT NULL) d
    JOIN unreadable_bill_files u ON u.first_day IS NULL OR d.day BETWEEN u.first_day AND u.last_day
    GROUP BY d.day
)
SELECT coalesce(b.day, a.day, u.day) AS day, coalesce(b.billing_currency, a.billing_currency) AS billing_currency,
       coalesce(b.e, 0) AS bill_effective_cost, coalesce(b.b, 0) AS bill_billed_cost,
       coalesce(a.e, 0) AS allocated_effective_cost, coalesce(a.b, 0) AS allocated_billed_cost,
       coalesce(b.qe, 0) AS quarantined_effective_cost, coalesce(b.qb, 0) AS quarantined_billed_cost,
       coalesce(b.ce, 0) AS config_effective_cost, coalesce(b.cb, 0) AS config_billed_cost,
       coalesce(a.ue, 0) AS unattributed_effective_cost,
       coalesce(a.e, 0) - coalesce(b.e, 0) - coalesce(b.ce, 0) AS difference_effective_cost,
       coalesce(a.b, 0) - coalesce(b.b, 0) - coalesce(b.cb, 0) AS difference_billed_cost,
       coalesce(b.lines, 0) AS bill_lines, coalesce(b.quarantined_lines, 0) AS quarantined_lines,
       coalesce(b.re, 0) AS rounding_effective_cost, coalesce(b.rb, 0) AS rounding_billed_cost,
       coalesce(u.n, 0) AS unreadable_bill_files,
       coalesce(u.files, []::VARCHAR[]) AS unreadable_bill_file_names,
       -- the day is reconciled only when every bill file that touches it could be read
       coalesce(u.n, 0) = 0 AS complete
FROM costed b FULL JOIN allocated a ON a.day = b.day AND a.billing_currency = b.billing_currency
-- an unreadable file's days: on every currency's row of the day (a day with nothing readable has one
-- row, with no currency)
FULL JOIN unreadable u ON u.day = coalesce(b.day, a.day)
