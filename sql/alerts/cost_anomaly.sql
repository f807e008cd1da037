-- cost_anomaly alerts for $day (docs/plans.md#alerts): a team's cost of the day, per billing currency,
-- far above its own previous days — the robust score (day − median) / (1.4826 · MAD) over the
-- `anomaly_window_days` before it is above `anomaly_score`, with at least `anomaly_min_days` of them.
-- Only rises raise an alert (a drop costs nothing); a team whose days do not vary (MAD 0) has no score.
-- cost_at_stake is the excess over the usual (median) day. One alert per team, currency and day: its
-- subject names all three, so the next day's evaluation, not finding it, resolves it.
WITH daily AS (
    SELECT day, team, billing_currency, sum(effective_cost) AS cost
    FROM marts.fct_cost_daily
    WHERE day BETWEEN $day::DATE - $anomaly_window_days::INTEGER AND $day::DATE AND team <> '_unallocated'
    GROUP BY ALL
),
usual AS (
    SELECT team, billing_currency, count(*) AS days, median(cost) AS median_cost
    FROM daily WHERE day < $day::DATE GROUP BY ALL
),
spread AS (
    SELECT d.team, d.billing_currency, median(abs(d.cost - u.median_cost)) AS mad
    FROM daily d JOIN usual u USING (team, billing_currency) WHERE d.day < $day::DATE GROUP BY ALL
),
scored AS (
    SELECT t.team, t.billing_currency, t.cost, u.days, u.median_cost, s.mad,
           (t.cost - u.median_cost)::DOUBLE / (1.4826 * s.mad::DOUBLE) AS score
    FROM daily t JOIN usual u USING (team, billing_currency) JOIN spread s USING (team, billing_currency)
    WHERE t.day = $day::DATE AND u.days >= $anomaly_min_days AND s.mad > 0 AND t.cost > u.median_cost
)
SELECT 'cost_anomaly' AS kind, CASE WHEN score > 2 * $anomaly_score THEN 'critical' ELSE 'warning' END AS severity,
       'team' AS subject_type, team || ' ' || strftime($day::DATE, '%Y-%m-%d') || ' ' || billing_currency AS subject,
       printf('score %.1f', score) AS threshold,
       team, (cost - median_cost)::DECIMAL(38, 18) AS cost_at_stake, billing_currency,
       printf('team %s spent %s %s on %s, %s %s above its usual day (median of %d days %s %s; score %.1f)',
              team, round(cost, 2)::VARCHAR, billing_currency, strftime($day::DATE, '%Y-%m-%d'), round(cost - median_cost, 2)::VARCHAR,
              billing_currency, days, round(median_cost, 2)::VARCHAR, billing_currency, score) AS message,
       json_object('cost', cost::VARCHAR, 'median_cost', median_cost::VARCHAR, 'mad', mad::VARCHAR,
                   'score', score, 'days', days, 'day', $day::DATE)::VARCHAR AS details,
       NULL::TIMESTAMP AS opened_at, NULL::TIMESTAMP AS resolved_at, FALSE AS since_edge
FROM scored
WHERE score > $anomaly_score
