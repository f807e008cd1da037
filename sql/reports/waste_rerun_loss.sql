-- Interruptions of the team's work over [$start, $end]: GPU-seconds since the last checkpoint of the
-- interrupted job (lost) and of the resuming job until its first step (restart), with their cost, a
-- row per day and billing currency (the mart puts the GPU-seconds on the first currency's row only;
-- a row without billed cost goes with the interruption's first currency, else the team's first).
-- fct_rerun_loss has no team: it is the interrupted job's team (or, when that job is not in the
-- mart, its run's team).
WITH loss AS (
    SELECT * FROM marts.fct_rerun_loss WHERE day BETWEEN $start AND $end
),
job AS (
    SELECT job_uid, any_value(team) AS team, arg_max(job_name, day) AS job_name,
           arg_max(user_name, day) AS user_name, arg_max(state, day) AS state
    FROM marts.fct_job_cost
    WHERE job_uid IN (SELECT interrupted_job_uid FROM loss)
    GROUP BY job_uid
),
run AS (
    SELECT run_id, arg_max(team, day) AS team
    FROM marts.fct_run_efficiency_daily
    WHERE run_id IN (SELECT run_id FROM loss)
    GROUP BY run_id
)
SELECT coalesce(l.billing_currency, min(l.billing_currency) OVER (PARTITION BY l.interrupted_job_uid),
                $first_currency) AS currency,
       l.day, l.run_id, l.job_id, l.interrupted_job_uid, j.job_name, j.user_name, j.state, l.cause,
       l.interrupted_at, l.last_checkpoint_at,
       l.lost_gpu_seconds::DOUBLE AS lost_gpu_seconds, l.restart_gpu_seconds::DOUBLE AS restart_gpu_seconds,
       l.effective_cost::DECIMAL(38, 18) AS effective_cost, l.is_estimate
FROM loss l
LEFT JOIN job j ON j.job_uid = l.interrupted_job_uid
LEFT JOIN run r ON r.run_id = l.run_id
WHERE coalesce(j.team, r.team) = $team
ORDER BY currency, l.day, l.interrupted_at, l.interrupted_job_uid
