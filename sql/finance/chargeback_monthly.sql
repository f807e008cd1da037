-- Monthly chargeback: what each team and project is charged, by ledger category.
CREATE OR REPLACE VIEW finance.chargeback_monthly AS
SELECT strftime(day, '%Y-%m') AS month, team, project, category,
       sum(effective_cost) AS effective_cost,
       sum(billed_cost) AS billed_cost,
       sum(gpu_seconds) / 3600 AS gpu_hours,
       count(DISTINCT day) AS days
FROM marts.fct_cost_daily
GROUP BY ALL
