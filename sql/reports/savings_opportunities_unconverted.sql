-- savings_opportunities.sql for a warehouse without the finance views (the live one): the mart's rows,
-- nothing converted.
WITH last AS (
    SELECT max(day) AS day FROM marts.fct_savings_opportunities WHERE day BETWEEN $start AND $end
)
SELECT s.day, s.window_start, s.window_days, s.opportunity_id, s.kind, s.subject_type, s.subject, s.team,
       s.project, s.user_name, s.cluster, s.gpu_hours, s.evidence, s.action, s.billing_currency,
       s.saving_window, s.saving_monthly, NULL::VARCHAR, NULL::DECIMAL(38, 18), NULL::DECIMAL(38, 18)
FROM marts.fct_savings_opportunities s, last
WHERE s.day = last.day AND ($team IS NULL OR s.team = $team)
ORDER BY s.billing_currency, s.saving_window DESC, s.opportunity_id
