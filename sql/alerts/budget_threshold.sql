-- budget_threshold alerts that $day's figures call for (docs/plans.md#alerts): a run's GPU-hour budget
-- and a project's monthly budget at the highest configured threshold crossed by $day, and a run whose
-- burn runs ahead of its progress by more than the margin. Each is one episode per subject (the run; the
-- run's pace; the project's month): a threshold crossed later updates it (pipelines/alerts/raising.py),
-- and a run no longer in the day's budget figures, or a month gone by, resolves it.
-- cost_at_stake is the spend to date (the run's, in its plan's currency; the project's month's, in the
-- budget's currency).
WITH thresholds AS (
    SELECT unnest($budget_thresholds::DOUBLE[]) AS pct
),
runs AS (
    SELECT * FROM marts.fct_run_budget_daily WHERE day = $day AND budget_gpu_hours > 0
),
run_thresholds AS (
    SELECT 'budget_threshold' AS kind,
           CASE WHEN t.pct >= 100 THEN 'critical' WHEN t.pct >= 80 THEN 'warning' ELSE 'info' END AS severity,
           'run' AS subject_type, r.run_id AS subject, printf('%g%%', t.pct) AS threshold, r.team, t.pct,
           r.cost_to_date AS cost_at_stake, r.billing_currency,
           printf('run %s has used %.1f%% of its GPU-hour budget (%.1f of %.1f GPU-hours; %.1f%% of its planned tokens done)',
                  r.run_id, r.burn_pct, r.gpu_hours_to_date, r.budget_gpu_hours, r.progress_pct)
           || CASE WHEN r.projected_gpu_hours IS NOT NULL
                   THEN printf('; at this pace it needs %.1f GPU-hours', r.projected_gpu_hours) ELSE '' END AS message,
           json_object('burn_pct', r.burn_pct, 'progress_pct', r.progress_pct, 'gpu_hours_to_date', r.gpu_hours_to_date,
                       'budget_gpu_hours', r.budget_gpu_hours, 'budget_cost', r.budget_cost::VARCHAR,
                       'projected_gpu_hours', r.projected_gpu_hours,
                       'projected_overrun_cost', r.projected_overrun_cost::VARCHAR)::VARCHAR AS details
    FROM runs r JOIN thresholds t ON r.burn_pct >= t.pct
    QUALIFY row_number() OVER (PARTITION BY r.run_id ORDER BY t.pct DESC) = 1
),
burn_ahead AS (
    SELECT 'budget_threshold' AS kind, 'warning' AS severity, 'run_pace' AS subject_type, r.run_id AS subject,
           'burn_ahead' AS threshold, r.team, r.cost_to_date AS cost_at_stake, r.billing_currency,
           printf('run %s burns ahead of its progress: %.1f%% of its planned GPU-hours used for %.1f%% of its planned tokens (margin %g points)',
                  r.run_id, r.planned_burn_pct, r.progress_pct, $burn_ahead_margin) AS message,
           json_object('planned_burn_pct', r.planned_burn_pct, 'progress_pct', r.progress_pct,
                       'burn_ahead_pct', r.burn_ahead_pct, 'margin_pct', $burn_ahead_margin)::VARCHAR AS details
    FROM runs r WHERE r.burn_ahead_pct > $burn_ahead_margin
),
budgets AS (
    SELECT project, amount::DECIMAL(38, 18) AS budget, currency AS billing_currency
    FROM (SELECT unnest(from_json($project_budgets, '[{"project":"VARCHAR","amount":"VARCHAR","currency":"VARCHAR"}]'),
                        recursive := true))
),
month_spend AS (
    SELECT project, billing_currency, sum(effective_cost) AS spent
    FROM marts.fct_cost_daily
    WHERE day BETWEEN date_trunc('month', $day::DATE) AND $day::DATE
    GROUP BY ALL
),
project_thresholds AS (
    SELECT 'budget_threshold' AS kind,
           CASE WHEN t.pct >= 100 THEN 'critical' WHEN t.pct >= 80 THEN 'warning' ELSE 'info' END AS severity,
           'project_month' AS subject_type, b.project || ' ' || strftime($day::DATE, '%Y-%m') AS subject,
           printf('%g%%', t.pct) AS threshold, t.pct,
           coalesce(config_lookup($project_teams, b.project), b.project) AS team, s.spent AS cost_at_stake,
           b.billing_currency,
           printf('project %s has spent %s %s of its %s monthly budget of %s %s (%.1f%%)', b.project,
                  round(s.spent, 2)::VARCHAR, b.billing_currency, strftime($day::DATE, '%Y-%m'), round(b.budget, 2)::VARCHAR,
                  b.billing_currency, 100 * s.spent / b.budget) AS message,
           json_object('spent', s.spent::VARCHAR, 'budget', b.budget::VARCHAR,
                       'burn_pct', round(100 * s.spent / b.budget, 1))::VARCHAR AS details
    FROM budgets b JOIN month_spend s USING (project, billing_currency)
    JOIN thresholds t ON s.spent >= t.pct / 100 * b.budget
    QUALIFY row_number() OVER (PARTITION BY b.project, b.billing_currency ORDER BY t.pct DESC) = 1
)
-- a budget's state is the day's: it holds (resolved_at NULL) from the evaluation that first finds it
SELECT * EXCLUDE (pct), NULL::TIMESTAMP AS opened_at, NULL::TIMESTAMP AS resolved_at, FALSE AS since_edge FROM (
    SELECT * FROM run_thresholds
    UNION ALL BY NAME SELECT * FROM burn_ahead
    UNION ALL BY NAME SELECT * FROM project_thresholds
)
