-- Monthly chargeback: what each team and project is charged, by ledger category and billing currency.
-- With `fx:` rates in the config, `*_reporting` columns give the same amounts in the one reporting
-- currency (rate of the currency and month; NULL where the config has no rate for them).
CREATE OR REPLACE VIEW finance.chargeback_monthly AS
WITH monthly AS (
    SELECT strftime(day, '%Y-%m') AS month, team, project, category, billing_currency,
           sum(effective_cost) AS effective_cost,
           sum(billed_cost) AS billed_cost,
           sum(gpu_seconds) / 3600 AS gpu_hours,
           count(DISTINCT day) AS days
    FROM marts.fct_cost_daily
    GROUP BY ALL
)
SELECT m.*, fx.reporting_currency,
       finance.times_rate(m.effective_cost, fx.rate) AS effective_cost_reporting,
       finance.times_rate(m.billed_cost, fx.rate) AS billed_cost_reporting,
       fx.source AS fx_source
FROM monthly m
LEFT JOIN finance.fx_rates fx ON fx.currency = m.billing_currency AND (fx.month = m.month OR fx.month IS NULL)
