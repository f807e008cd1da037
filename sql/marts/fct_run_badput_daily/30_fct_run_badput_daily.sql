-- The badput of each run per day (docs/ledger.md#the-badput-of-a-run): every GPU-second of the run's
-- jobs on $day and its cost in exactly one kind. disruption, idle, failed and unmonitored are the
-- ledger's rerun_loss, allocated_idle, failed_job and unmonitored as they are (each category's
-- badput_kind, marts.dim_ledger_categories); productive is divided
-- into startup, checkpoint_save, evaluation, data_wait, exposed_communication and goodput by the
-- weights of 10_phase_weights.sql, its cost split exactly over them (20_cost_splits.sql). Per run, day
-- and currency the kinds sum exactly to the run's GPU-seconds and cost in marts.fct_run_efficiency_daily
-- (whose team and project they take); GPU-seconds sit on the first currency's row only.
WITH other_seconds AS (
    SELECT j.run_id, k.badput_kind AS kind, g.gpu_seconds
    FROM intermediate.int_gpu_seconds g JOIN badput_jobs j USING (job_uid)
    JOIN marts.dim_ledger_categories k ON k.name = g.category AND k.badput_kind IS NOT NULL
    WHERE g.day = $day
),
seconds AS (
    SELECT run_id, kind, sum(gpu_seconds) AS gpu_seconds
    FROM (SELECT run_id, kind, gpu_seconds FROM other_seconds
          UNION ALL
          SELECT run_id, kind, gpu_seconds FROM badput_weights)
    GROUP BY run_id, kind
),
costs AS (
    SELECT j.run_id, k.badput_kind AS kind, c.billing_currency, c.effective_cost, c.billed_cost
    FROM intermediate.int_cost_allocations c JOIN badput_jobs j USING (job_uid)
    JOIN marts.dim_ledger_categories k ON k.name = c.category AND k.badput_kind IS NOT NULL
    WHERE c.day = $day AND c.line_kind = 'node_hour'
    UNION ALL
    SELECT run_id, kind, billing_currency, effective_cost, billed_cost FROM badput_kind_costs
),
cost_by_kind AS (
    SELECT run_id, kind, billing_currency, sum(effective_cost) AS effective_cost, sum(billed_cost) AS billed_cost
    FROM costs GROUP BY run_id, kind, billing_currency
),
currencies AS (
    SELECT run_id, billing_currency,
           row_number() OVER (PARTITION BY run_id ORDER BY billing_currency) = 1 AS first_currency
    FROM (SELECT DISTINCT run_id, billing_currency FROM costs)
),
kinds AS (
    SELECT run_id, kind FROM seconds UNION SELECT run_id, kind FROM cost_by_kind
),
runs AS (
    SELECT run_id, min(team) AS team, min(project) AS project
    FROM marts.fct_run_efficiency_daily WHERE day = $day GROUP BY run_id
),
grid AS (
    SELECT k.run_id, k.kind, cu.billing_currency, coalesce(cu.first_currency, TRUE) AS first_currency
    FROM kinds k LEFT JOIN currencies cu USING (run_id)
)
SELECT $day::DATE AS day, g.run_id, r.team, r.project, g.billing_currency, g.kind,
       CASE WHEN g.first_currency THEN coalesce(s.gpu_seconds, 0) ELSE 0 END::DOUBLE AS gpu_seconds,
       coalesce(c.effective_cost, 0)::DECIMAL(38, 18) AS effective_cost,
       coalesce(c.billed_cost, 0)::DECIMAL(38, 18) AS billed_cost
FROM grid g
LEFT JOIN seconds s ON s.run_id = g.run_id AND s.kind = g.kind
LEFT JOIN cost_by_kind c ON c.run_id = g.run_id AND c.kind = g.kind AND c.billing_currency = g.billing_currency
LEFT JOIN runs r ON r.run_id = g.run_id
WHERE (g.first_currency AND coalesce(s.gpu_seconds, 0) <> 0)
   OR coalesce(c.effective_cost, 0) <> 0 OR coalesce(c.billed_cost, 0) <> 0
