-- Every dollar (euro, krone…) of $day's bill, placed: one row per origin bill line and team, project,
-- category, job, host and hour piece, with exact EffectiveCost and BilledCost shares in the line's
-- currency and the GPU-seconds behind node-hour pieces (counted once per node-hour). The sum over a
-- day and currency equals the day's share of every landed bill line (staged or quarantined) exactly.
WITH spread AS (
    -- tax and untagged credits, by pre-tax cost in their currency
    SELECT l.line_key, l.billing_currency, w.team, w.project, l.placement AS category,
           units_money(se.units) AS effective_cost, units_money(sb.units) AS billed_cost,
           w.weight / 1e6 AS basis_quantity
    FROM other_lines l
    JOIN pretax_weights w USING (billing_currency)
    JOIN split_output se ON se.group_key = l.line_key || '|e' AND se.piece_key = w.piece_key
    JOIN split_output sb ON sb.group_key = l.line_key || '|b' AND sb.piece_key = w.piece_key
    WHERE l.placement = 'tax' OR (l.placement = 'credit' AND l.tag_project IS NULL)
),
unspread AS (
    -- tax and credits of a currency with no pre-tax cost that day to spread them by
    SELECT line_key, billing_currency, '_unallocated' AS team, '_unallocated' AS project,
           'unattributed' AS category, effective_cost, billed_cost, NULL AS basis_quantity
    FROM other_lines
    WHERE (placement = 'tax' OR (placement = 'credit' AND tag_project IS NULL))
      AND billing_currency NOT IN (SELECT billing_currency FROM taxed_currencies)
)
SELECT $day::DATE AS day, line_key, billing_currency, 'bill' AS cost_source,
       team, project, category, rerun_part, job_uid, hostname, hour_ts, line_kind,
       coalesce(effective_cost, 0)::DECIMAL(38, 18) AS effective_cost,
       coalesce(billed_cost, 0)::DECIMAL(38, 18) AS billed_cost,
       gpu_seconds::DOUBLE AS gpu_seconds,
       -- what weighed the piece: GPU-seconds for node-hours, the project's cost for shared lines, tax
       -- and credits (in units of the currency); NULL for lines placed whole
       basis_quantity::DOUBLE AS basis_quantity
FROM cost_pieces
UNION ALL
SELECT $day::DATE, line_key, billing_currency, 'bill', team, project, category, NULL, NULL, NULL, NULL, 'line',
       coalesce(effective_cost, 0), coalesce(billed_cost, 0), 0, basis_quantity
FROM (SELECT * FROM spread UNION ALL SELECT * FROM unspread)
