-- Every dollar of $day's bill, placed: one row per team, project, category, job, host and hour piece, with
-- exact EffectiveCost and BilledCost shares and the GPU-seconds behind node-hour pieces. The sum over
-- a day equals the day's share of every landed bill line (staged or quarantined) exactly.
WITH taxes AS (
    SELECT w.team, w.project, string_split(s.group_key, '|')[2] AS category,
           units_money(sum(s.units) FILTER (string_split(s.group_key, '|')[3] = 'e')) AS effective_cost,
           units_money(sum(s.units) FILTER (string_split(s.group_key, '|')[3] = 'b')) AS billed_cost
    FROM split_output s
    JOIN pretax_weights w USING (piece_key)
    WHERE (SELECT sum(weight) FROM pretax_weights) > 0
    GROUP BY w.team, w.project, string_split(s.group_key, '|')[2]
),
untaxed AS (
    -- tax and credits on a day with no pre-tax cost to spread them by
    SELECT '_unallocated' AS team, '_unallocated' AS project, 'unattributed' AS category,
           effective_cost, billed_cost
    FROM other_lines
    WHERE (placement = 'tax' OR (placement = 'credit' AND tag_project IS NULL))
      AND coalesce((SELECT sum(weight) FROM pretax_weights), 0) = 0
)
SELECT $day::DATE AS day, team, project, category, rerun_part, job_uid, hostname, hour_ts, line_kind,
       coalesce(effective_cost, 0)::DECIMAL(38, 18) AS effective_cost,
       coalesce(billed_cost, 0)::DECIMAL(38, 18) AS billed_cost,
       gpu_seconds::DOUBLE AS gpu_seconds
FROM cost_pieces
UNION ALL
SELECT $day::DATE, team, project, category, NULL, NULL, NULL, NULL, 'line',
       coalesce(effective_cost, 0), coalesce(billed_cost, 0), 0 FROM taxes
UNION ALL
SELECT $day::DATE, team, project, category, NULL, NULL, NULL, NULL, 'line', effective_cost, billed_cost, 0 FROM untaxed
