-- The team's jobs that wasted GPU time over [$start, $end], one row per job (the mart has a row per
-- job and day when a job crosses midnight), keeping the $top worst of each kind: hung / idle
-- (allocated_idle), failed and not resumed (failed_job), no telemetry (unmonitored). Work lost to
-- interruptions has its own query (waste_rerun_loss.sql), per interruption.
-- The mart keeps a job's cost, not its cost per category, so the report prices a job's waste as its
-- cost times the wasted share of its GPU-seconds; that is done in Python in DECIMAL. The DOUBLE here
-- only ranks.
WITH jobs AS (
    SELECT job_uid,
           any_value(job_id) AS job_id, any_value(cluster) AS cluster, any_value(run_id) AS run_id,
           any_value(project) AS project, arg_max(user_name, day) AS user_name,
           arg_max(job_name, day) AS job_name, arg_max(state, day) AS state,
           min(start_ts) AS start_ts, max(end_ts) AS end_ts, max(gpus) AS gpus,
           sum(gpu_seconds)::DOUBLE AS gpu_seconds,
           sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
           sum(allocated_idle_gpu_seconds)::DOUBLE AS allocated_idle_gpu_seconds,
           sum(failed_job_gpu_seconds)::DOUBLE AS failed_job_gpu_seconds,
           sum(unmonitored_gpu_seconds)::DOUBLE AS unmonitored_gpu_seconds
    FROM marts.fct_job_cost
    WHERE team = $team AND day BETWEEN $start AND $end
    GROUP BY job_uid
),
ranked AS (
    SELECT *,
           row_number() OVER (ORDER BY allocated_idle_gpu_seconds * effective_cost::DOUBLE / nullif(gpu_seconds, 0) DESC NULLS LAST, job_uid) AS idle_rank,
           row_number() OVER (ORDER BY failed_job_gpu_seconds * effective_cost::DOUBLE / nullif(gpu_seconds, 0) DESC NULLS LAST, job_uid) AS failed_rank,
           row_number() OVER (ORDER BY unmonitored_gpu_seconds * effective_cost::DOUBLE / nullif(gpu_seconds, 0) DESC NULLS LAST, job_uid) AS unmonitored_rank
    FROM jobs
)
SELECT * FROM ranked
WHERE (idle_rank <= $top AND allocated_idle_gpu_seconds > 0)
   OR (failed_rank <= $top AND failed_job_gpu_seconds > 0)
   OR (unmonitored_rank <= $top AND unmonitored_gpu_seconds > 0)
ORDER BY job_uid
