-- Work lost to interruptions, per day and interruption: the interrupted job's GPU-seconds since its
-- last checkpoint (lost) and the resuming job's GPU-seconds until its first step after the restore
-- (restart), with their cost per billing currency (GPU-seconds on the first currency's row only). An
-- interruption spanning days has a row on each.
-- rerun loss: the GPU time a job's badput of kind `disruption` (marts.dim_ledger_categories)
WITH rerun AS (
    SELECT job_uid, rerun_part, sum(gpu_seconds) AS gpu_seconds FROM intermediate.int_gpu_seconds
    WHERE day = $day AND category IN (SELECT name FROM marts.dim_ledger_categories WHERE badput_kind = 'disruption') GROUP BY ALL
),
rerun_cost AS (
    SELECT job_uid, rerun_part, billing_currency, sum(effective_cost) AS effective_cost
    FROM intermediate.int_cost_allocations
    WHERE day = $day AND category IN (SELECT name FROM marts.dim_ledger_categories WHERE badput_kind = 'disruption') GROUP BY ALL
),
lost AS (
    SELECT j.job_uid AS interruption, j.run_id, j.job_id, j.end_ts AS interrupted_at, j.last_checkpoint_at,
           j.state || ' ' || coalesce(j.exit_code, '') AS cause, j.rerun_is_estimate,
           r.gpu_seconds AS lost, 0 AS restart
    FROM intermediate.int_job_allocations j
    JOIN rerun r ON r.job_uid = j.job_uid AND r.rerun_part = 'lost'
    WHERE j.day = $day AND j.interrupted
),
restart AS (
    SELECT j.resumes_job_uid AS interruption, j.run_id, j.resumes_job_id AS job_id,
           j.resumes_interrupted_at AS interrupted_at, NULL::TIMESTAMP AS last_checkpoint_at,
           j.resumes_cause AS cause, FALSE AS rerun_is_estimate,
           0 AS lost, r.gpu_seconds AS restart
    FROM intermediate.int_job_allocations j
    JOIN rerun r ON r.job_uid = j.job_uid AND r.rerun_part = 'restart'
    WHERE j.day = $day AND j.resumes_job_uid IS NOT NULL
),
costs AS (
    -- each part's cost goes to the interruption it belongs to
    SELECT j.job_uid AS interruption, c.billing_currency, c.effective_cost
    FROM intermediate.int_job_allocations j
    JOIN rerun_cost c ON c.job_uid = j.job_uid AND c.rerun_part = 'lost'
    WHERE j.day = $day AND j.interrupted
    UNION ALL
    SELECT j.resumes_job_uid, c.billing_currency, c.effective_cost
    FROM intermediate.int_job_allocations j
    JOIN rerun_cost c ON c.job_uid = j.job_uid AND c.rerun_part = 'restart'
    WHERE j.day = $day AND j.resumes_job_uid IS NOT NULL
),
interruptions AS (
    SELECT interruption, any_value(run_id) AS run_id, any_value(job_id) AS job_id,
           any_value(interrupted_at) AS interrupted_at, max(last_checkpoint_at) AS last_checkpoint_at,
           sum(lost) AS lost, sum(restart) AS restart, trim(any_value(cause)) AS cause,
           bool_or(rerun_is_estimate) AS is_estimate
    FROM (SELECT * FROM lost UNION ALL SELECT * FROM restart)
    GROUP BY interruption
),
cost_by_currency AS (
    SELECT interruption, billing_currency, sum(effective_cost) AS effective_cost,
           row_number() OVER (PARTITION BY interruption ORDER BY billing_currency) = 1 AS first_currency
    FROM costs GROUP BY interruption, billing_currency
)
SELECT $day::DATE AS day, i.interruption AS interrupted_job_uid, i.run_id, i.job_id, i.interrupted_at,
       i.last_checkpoint_at, c.billing_currency,
       CASE WHEN coalesce(c.first_currency, TRUE) THEN i.lost ELSE 0 END::DOUBLE AS lost_gpu_seconds,
       CASE WHEN coalesce(c.first_currency, TRUE) THEN i.restart ELSE 0 END::DOUBLE AS restart_gpu_seconds,
       coalesce(c.effective_cost, 0)::DECIMAL(38, 18) AS effective_cost,
       i.cause, i.is_estimate
FROM interruptions i
LEFT JOIN cost_by_currency c USING (interruption)
