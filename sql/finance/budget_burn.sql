-- Budget burn per project and month against the config's monthly budgets, with the 30 / 50 / 80 %
-- thresholds finance watches. A budget is in one currency and is burnt by spend in that currency.
-- `projected_*` extends the month-to-date pace over the whole month.
CREATE OR REPLACE VIEW finance.budget_burn AS
WITH spend AS (
    SELECT strftime(day, '%Y-%m') AS month, team, project, billing_currency,
           sum(effective_cost) AS spent, max(day) AS through_day
    FROM marts.fct_cost_daily GROUP BY ALL
)
SELECT s.month, s.team, s.project, s.billing_currency, bu.monthly_budget AS budget, s.spent, s.through_day,
       round(100 * s.spent / bu.monthly_budget, 1) AS burn_pct,
       CASE WHEN s.spent >= 0.8 * bu.monthly_budget THEN '80%'
            WHEN s.spent >= 0.5 * bu.monthly_budget THEN '50%'
            WHEN s.spent >= 0.3 * bu.monthly_budget THEN '30%' ELSE 'under 30%' END AS threshold_reached,
       round(s.spent / day(s.through_day) * day(last_day(s.through_day)), 2) AS projected_month_spend,
       round(100 * s.spent / day(s.through_day) * day(last_day(s.through_day)) / bu.monthly_budget, 1) AS projected_burn_pct
FROM spend s JOIN finance.budgets bu USING (project, billing_currency)
