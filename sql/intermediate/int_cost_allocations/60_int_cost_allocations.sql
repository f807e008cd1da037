-- Every unit of $day's bill, placed: one row per origin bill line and team, project, category, job,
-- host and hour piece, with exact EffectiveCost and BilledCost shares in the line's currency and the
-- GPU-seconds behind node-hour pieces (counted once per node-hour). The sum over a day and currency
-- equals the day's share of every landed bill line (staged or quarantined) exactly.
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
FROM tax_pieces
