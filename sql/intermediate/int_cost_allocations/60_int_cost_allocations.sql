-- Every unit of $day's cost, placed: one row per origin cost line (a bill line, or a line from the
-- config: cost_source rate_card, amortization, energy) and team, project, category, job, host and hour
-- piece, with exact EffectiveCost and BilledCost shares in the line's currency and the GPU-seconds,
-- kWh and CO2e behind node-hour pieces (counted once per node-hour). The sum over a day, currency and
-- cost source equals the day's share of every landed bill line (staged or quarantined), and of every
-- config cost line, exactly.
SELECT $day::DATE AS day, line_key, billing_currency, cost_source,
       team, project, category, rerun_part, job_uid, hostname, hour_ts, line_kind,
       coalesce(effective_cost, 0)::DECIMAL(38, 18) AS effective_cost,
       coalesce(billed_cost, 0)::DECIMAL(38, 18) AS billed_cost,
       gpu_seconds::DOUBLE AS gpu_seconds,
       -- how the piece was placed: gpu_seconds (a node-hour split by its GPU-seconds), tag,
       -- commitment_owner, gpu_cost or project_gpu_seconds (a shared line), pretax_cost (tax and
       -- untagged credits), unattributed
       method,
       -- what weighed the piece: GPU-seconds for node-hours, the project's cost (in units of the
       -- currency) or GPU-seconds for shared lines, its pre-tax cost for tax and credits; NULL for
       -- lines placed whole
       basis_quantity::DOUBLE AS basis_quantity,
       -- the facility energy of the node-hour (GPU kWh × PUE) and its CO2e, shared by GPU-seconds
       kwh::DECIMAL(38, 12) AS kwh, co2e_kg::DECIMAL(38, 12) AS co2e_kg
FROM cost_pieces
UNION ALL
SELECT $day::DATE, line_key, billing_currency, 'bill', team, project, category, NULL, NULL, NULL, NULL, 'line',
       coalesce(effective_cost, 0), coalesce(billed_cost, 0), 0, method, basis_quantity, 0, 0
FROM tax_pieces
