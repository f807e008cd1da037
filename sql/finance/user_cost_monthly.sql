-- Monthly cost per team and user, by ledger category and billing currency, as `sreport user top` gives
-- it, with the under-use lens: the low-activity GPU-hours and cost of the user's productive time
-- (docs/ledger.md#under-use-a-lens-on-productive-time). Sums of marts.fct_user_cost_daily.
CREATE OR REPLACE VIEW finance.user_cost_monthly AS
SELECT strftime(day, '%Y-%m') AS month, team, user_name, category, billing_currency,
       sum(effective_cost) AS effective_cost,
       sum(billed_cost) AS billed_cost,
       sum(gpu_seconds) / 3600 AS gpu_hours,
       sum(low_activity_gpu_seconds) / 3600 AS low_activity_gpu_hours,
       sum(low_activity_cost) AS low_activity_cost,
       count(DISTINCT day) AS days
FROM marts.fct_user_cost_daily
GROUP BY ALL
