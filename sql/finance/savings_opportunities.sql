-- The savings opportunities (marts.fct_savings_opportunities) with their money also in the reporting
-- currency: at the rate of the currency and the month of the window's last day (NULL where `fx:` has
-- no rate for them), so opportunities in two currencies can be ranked on one scale.
CREATE OR REPLACE VIEW finance.savings_opportunities AS
SELECT s.*, fx.reporting_currency,
       finance.times_rate(s.saving_window, fx.rate) AS saving_window_reporting,
       finance.times_rate(s.saving_monthly, fx.rate) AS saving_monthly_reporting,
       fx.source AS fx_source
FROM marts.fct_savings_opportunities s
LEFT JOIN finance.fx_rates fx
  ON fx.currency = s.billing_currency AND (fx.month = strftime(s.day, '%Y-%m') OR fx.month IS NULL)
