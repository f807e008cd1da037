-- The savings opportunities of a report's period (docs/ledger.md#savings-opportunities): the rows of the
-- period's last day the mart was built on (the trailing window ending there), of team $team (NULL: every
-- team's, and those of no one team), with their money in the reporting currency (finance.savings_opportunities;
-- NULL without an `fx:` rate). Largest first: in the reporting currency, then in the bill's.
WITH last AS (
    SELECT max(day) AS day FROM finance.savings_opportunities WHERE day BETWEEN $start AND $end
)
SELECT s.day, s.window_start, s.window_days, s.opportunity_id, s.kind, s.subject_type, s.subject, s.team,
       s.project, s.user_name, s.cluster, s.gpu_hours, s.evidence, s.action, s.billing_currency,
       s.saving_window, s.saving_monthly, s.reporting_currency, s.saving_window_reporting, s.saving_monthly_reporting
FROM finance.savings_opportunities s, last
WHERE s.day = last.day AND ($team IS NULL OR s.team = $team)
ORDER BY s.saving_window_reporting DESC NULLS LAST, s.billing_currency, s.saving_window DESC, s.opportunity_id
