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
-- amount × rate: both are DECIMAL(38,18), whose product needs 36 decimals and would overflow above 100,
-- so it is taken in parts, trunc(a)·r + frac(a)·trunc(r) + frac(a)·frac(r): exact, rounded once to 1e-18.
SELECT m.*, fx.reporting_currency,
       (trunc(m.effective_cost)::DECIMAL(38, 0) * fx.rate)::DECIMAL(38, 18)
       + ((m.effective_cost - trunc(m.effective_cost))::DECIMAL(19, 18) * trunc(fx.rate)::DECIMAL(38, 0))::DECIMAL(38, 18)
       + ((m.effective_cost - trunc(m.effective_cost))::DECIMAL(19, 18) * (fx.rate - trunc(fx.rate))::DECIMAL(19, 18))::DECIMAL(38, 18) AS effective_cost_reporting,
       (trunc(m.billed_cost)::DECIMAL(38, 0) * fx.rate)::DECIMAL(38, 18)
       + ((m.billed_cost - trunc(m.billed_cost))::DECIMAL(19, 18) * trunc(fx.rate)::DECIMAL(38, 0))::DECIMAL(38, 18)
       + ((m.billed_cost - trunc(m.billed_cost))::DECIMAL(19, 18) * (fx.rate - trunc(fx.rate))::DECIMAL(19, 18))::DECIMAL(38, 18) AS billed_cost_reporting,
       fx.source AS fx_source
FROM monthly m
LEFT JOIN finance.fx_rates fx ON fx.currency = m.billing_currency AND (fx.month = m.month OR fx.month IS NULL)
