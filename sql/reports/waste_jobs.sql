-- The team's (or the user's) jobs that wasted GPU time over [$start, $end], one row per job and billing currency
-- (the mart has a row per job, day and currency), keeping the $top worst of each kind per currency:
-- hung / idle (allocated_idle), failed and not resumed (failed_job), no telemetry (unmonitored). Work
-- lost to interruptions has its own query (waste_rerun_loss.sql), per interruption.
-- A job's GPU-seconds are the job's own, summed over all its rows: the mart puts them on its first
-- currency's row only. Its cost is the part billed in the row's currency; a job without billed cost
-- (NULL currency) goes with its own first currency, else the team's first.
-- The mart keeps a job's cost, not its cost per category, so the report prices a job's waste as its
-- cost times the wasted share of its GPU-seconds; that is done in Python in DECIMAL. The DOUBLE here
-- only ranks.
WITH rows AS (
    SELECT coalesce(billing_currency, min(billing_currency) OVER (PARTITION BY job_uid), $first_currency) AS currency,
           *
    FROM marts.fct_job_cost
    WHERE day BETWEEN $start AND $end
      -- a team's report names its team; a user's report (`report --user`) its user, in every team
      AND ($team IS NULL OR team = $team) AND ($user IS NULL OR user_name = $user)
),
jobs AS (
    SELECT job_uid,
           any_value(job_id) AS job_id, any_value(cluster) AS cluster, any_value(run_id) AS run_id,
           any_value(project) AS project, arg_max(user_name, day) AS user_name,
           arg_max(job_name, day) AS job_name, arg_max(state, day) AS state,
           min(start_ts) AS start_ts, max(end_ts) AS end_ts, max(gpus) AS gpus,
           sum(gpu_seconds)::DOUBLE AS gpu_seconds,
           sum(allocated_idle_gpu_seconds)::DOUBLE AS allocated_idle_gpu_seconds,
           sum(failed_job_gpu_seconds)::DOUBLE AS failed_job_gpu_seconds,
           sum(unmonitored_gpu_seconds)::DOUBLE AS unmonitored_gpu_seconds
    FROM rows
    GROUP BY job_uid
),
cost AS (
    SELECT job_uid, currency, sum(effective_cost)::DECIMAL(38, 18) AS effective_cost
    FROM rows
    GROUP BY job_uid, currency
),
ranked AS (
    SELECT c.currency, j.*, c.effective_cost,
           row_number() OVER (PARTITION BY c.currency ORDER BY j.allocated_idle_gpu_seconds * c.effective_cost::DOUBLE
                              / nullif(j.gpu_seconds, 0) DESC NULLS LAST, j.job_uid) AS idle_rank,
           row_number() OVER (PARTITION BY c.currency ORDER BY j.failed_job_gpu_seconds * c.effective_cost::DOUBLE
                              / nullif(j.gpu_seconds, 0) DESC NULLS LAST, j.job_uid) AS failed_rank,
           row_number() OVER (PARTITION BY c.currency ORDER BY j.unmonitored_gpu_seconds * c.effective_cost::DOUBLE
                              / nullif(j.gpu_seconds, 0) DESC NULLS LAST, j.job_uid) AS unmonitored_rank
    FROM cost c JOIN jobs j USING (job_uid)
)
SELECT currency, job_uid, job_id, cluster, run_id, project, user_name, job_name, state, start_ts, end_ts, gpus,
       gpu_seconds, effective_cost, allocated_idle_gpu_seconds, failed_job_gpu_seconds, unmonitored_gpu_seconds,
       idle_rank, failed_rank, unmonitored_rank
FROM ranked
WHERE (idle_rank <= $top AND allocated_idle_gpu_seconds > 0)
   OR (failed_rank <= $top AND failed_job_gpu_seconds > 0)
   OR (unmonitored_rank <= $top AND unmonitored_gpu_seconds > 0)
ORDER BY currency, job_uid
