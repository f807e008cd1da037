-- Monthly reconciliation by invoice month (the billing period a line belongs to) and billing currency:
-- the bill's lines of that invoice month, over the days processed, against the ledger's allocation of
-- those days. Lines of another invoice month charged in these days (late corrections) are shown apart.
-- The config's generated cost lines (rate cards, contracts, owned hardware, energy) are beside the bill
-- as `config_*`; the difference is allocated − bill − config.
CREATE OR REPLACE VIEW finance.reconciliation_monthly AS
WITH bill AS (
    SELECT strftime(day, '%Y-%m') AS month, billing_currency,
           sum(effective_cost) AS e, sum(billed_cost) AS b,
           coalesce(sum(effective_cost) FILTER (invoice_month <> strftime(day, '%Y-%m')), 0) AS other_e,
           sum(quarantined_effective_cost) AS qe,
           count(DISTINCT day) AS days
    FROM marts.fct_bill_daily GROUP BY 1, 2
),
config AS (
    SELECT strftime(day, '%Y-%m') AS month, billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM marts.fct_config_cost_daily GROUP BY 1, 2
),
costed AS (
    SELECT coalesce(b.month, c.month) AS month, coalesce(b.billing_currency, c.billing_currency) AS billing_currency,
           b.e, b.b, b.other_e, b.qe, b.days, c.e AS ce, c.b AS cb
    FROM bill b FULL JOIN config c USING (month, billing_currency)
),
allocated AS (
    SELECT strftime(day, '%Y-%m') AS month, billing_currency, sum(effective_cost) AS e, sum(billed_cost) AS b
    FROM marts.fct_cost_daily GROUP BY 1, 2
)
SELECT month AS invoice_month, billing_currency,
       coalesce(b.days, 0) AS days_processed,
       coalesce(b.e, 0) AS bill_effective_cost, coalesce(b.b, 0) AS bill_billed_cost,
       coalesce(b.other_e, 0) AS other_invoice_month_effective_cost,
       coalesce(b.qe, 0) AS quarantined_effective_cost,
       coalesce(b.ce, 0) AS config_effective_cost, coalesce(b.cb, 0) AS config_billed_cost,
       coalesce(a.e, 0) AS allocated_effective_cost, coalesce(a.b, 0) AS allocated_billed_cost,
       coalesce(a.e, 0) - coalesce(b.e, 0) - coalesce(b.ce, 0) AS difference_effective_cost,
       coalesce(a.b, 0) - coalesce(b.b, 0) - coalesce(b.cb, 0) AS difference_billed_cost
FROM costed b FULL JOIN allocated a USING (month, billing_currency)
