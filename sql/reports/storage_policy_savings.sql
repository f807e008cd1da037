-- What storage.policy would save the team a month, per currency and kind of opportunity, as of the
-- period's last day that has opportunities (marts.fct_savings_opportunities).
SELECT billing_currency AS currency, kind, count(*)::INTEGER AS opportunities,
       sum(saving_monthly)::DECIMAL(38, 18) AS saving_monthly
FROM marts.fct_savings_opportunities
WHERE team = $team AND kind IN ('prune_checkpoints', 'tier_down', 'stale_datasets')
  AND day = (SELECT max(day) FROM marts.fct_savings_opportunities WHERE day BETWEEN $start AND $end)
GROUP BY ALL
ORDER BY currency, saving_monthly DESC
