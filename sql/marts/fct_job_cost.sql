-- Cost of each job on the day (a job crossing midnight has a row per day), with its GPU-seconds per
-- ledger category. GPU-seconds count all of the job's allocation; cost comes from billed node-hours.
WITH seconds AS (
    SELECT job_uid,
           sum(gpu_seconds) AS gpu_seconds,
           sum(gpu_seconds) FILTER (category = 'productive') AS productive_gpu_seconds,
           sum(gpu_seconds) FILTER (category = 'rerun_loss') AS rerun_loss_gpu_seconds,
           sum(gpu_seconds) FILTER (category = 'allocated_idle') AS allocated_idle_gpu_seconds,
           sum(gpu_seconds) FILTER (category = 'failed_job') AS failed_job_gpu_seconds,
           sum(gpu_seconds) FILTER (category = 'unmonitored') AS unmonitored_gpu_seconds
    FROM intermediate.int_gpu_seconds WHERE day = $day GROUP BY job_uid
),
cost AS (
    SELECT job_uid, sum(effective_cost) AS effective_cost, sum(billed_cost) AS billed_cost
    FROM intermediate.int_cost_allocations WHERE day = $day AND job_uid IS NOT NULL GROUP BY job_uid
)
SELECT j.day, j.job_id, j.job_uid, j.cluster, j.run_id, j.team, j.project, j.user_name, j.account,
       j.job_name, j.partition, j.state, j.exit_code, j.start_ts, j.end_ts,
       coalesce(j.gpus, 0) AS gpus, j.hosts,
       coalesce(s.gpu_seconds, 0)::DOUBLE AS gpu_seconds,
       coalesce(c.effective_cost, 0)::DECIMAL(38, 18) AS effective_cost,
       coalesce(c.billed_cost, 0)::DECIMAL(38, 18) AS billed_cost,
       coalesce(s.productive_gpu_seconds, 0)::DOUBLE AS productive_gpu_seconds,
       coalesce(s.rerun_loss_gpu_seconds, 0)::DOUBLE AS rerun_loss_gpu_seconds,
       coalesce(s.allocated_idle_gpu_seconds, 0)::DOUBLE AS allocated_idle_gpu_seconds,
       coalesce(s.failed_job_gpu_seconds, 0)::DOUBLE AS failed_job_gpu_seconds,
       coalesce(s.unmonitored_gpu_seconds, 0)::DOUBLE AS unmonitored_gpu_seconds
FROM intermediate.int_job_allocations j
LEFT JOIN seconds s USING (job_uid)
LEFT JOIN cost c USING (job_uid)
WHERE j.day = $day
