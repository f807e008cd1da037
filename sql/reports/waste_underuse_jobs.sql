-- The team's (or the user's) busy but under-used jobs over [$start, $end], per billing currency, the $top worst
-- (docs/ledger.md#under-use-a-lens-on-productive-time): productive GPU time at low SM activity and its
-- cost, the GPUs held but never active and the right size, and the smaller GPU that would have held the
-- job with what it would have cost there. One row per job and currency (the mart has a row per job, day
-- and currency); its GPU-seconds are on its first currency's rows, so they are summed over all of them.
WITH rows AS (
    SELECT coalesce(billing_currency, min(billing_currency) OVER (PARTITION BY job_uid), $first_currency) AS currency,
           *
    FROM marts.fct_job_efficiency_daily
    WHERE day BETWEEN $start AND $end
      -- a team's report names its team; a user's report (`report --user`) its user, in every team
      AND ($team IS NULL OR team = $team) AND ($user IS NULL OR user_name = $user)
),
jobs AS (
    SELECT job_uid, any_value(job_id) AS job_id, any_value(cluster) AS cluster, any_value(project) AS project,
           arg_max(user_name, day) AS user_name, arg_max(job_name, day) AS job_name, max(gpus) AS gpus,
           any_value(gpu_model) AS gpu_model,
           sum(productive_gpu_seconds)::DOUBLE AS productive_gpu_seconds,
           sum(low_activity_gpu_seconds)::DOUBLE AS low_activity_gpu_seconds,
           sum(sm_active_avg * productive_gpu_seconds) FILTER (sm_active_avg IS NOT NULL)
               / nullif(sum(productive_gpu_seconds) FILTER (sm_active_avg IS NOT NULL), 0) AS sm_active_avg,
           max(gpus_never_active) AS gpus_never_active, max(fb_used_max_mib) AS fb_used_max_mib,
           -- the smaller GPU only when it held the job on every day (the largest of those days' picks)
           CASE WHEN count(*) FILTER (fits_smaller IS NULL) = 0
                THEN arg_max(fits_smaller, fits_smaller_memory_gb) END AS fits_smaller
    FROM rows
    GROUP BY job_uid
),
cost AS (
    SELECT job_uid, currency, sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
           sum(low_activity_cost)::DECIMAL(38, 18) AS low_activity_cost,
           sum(fits_smaller_cost)::DECIMAL(38, 18) AS fits_smaller_cost
    FROM rows
    GROUP BY job_uid, currency
),
ranked AS (
    SELECT c.currency, j.*, c.effective_cost, c.low_activity_cost,
           CASE WHEN j.fits_smaller IS NOT NULL THEN c.fits_smaller_cost END AS fits_smaller_cost,
           -- ranks only (the DOUBLE): low-activity cost plus what the smaller GPU would have saved
           row_number() OVER (PARTITION BY c.currency ORDER BY
               c.low_activity_cost::DOUBLE
               + CASE WHEN j.fits_smaller IS NOT NULL THEN greatest(c.effective_cost - c.fits_smaller_cost, 0)::DOUBLE
                      ELSE 0 END DESC, j.gpus_never_active DESC, j.job_uid) AS rnk
    FROM cost c JOIN jobs j USING (job_uid)
)
SELECT currency, job_uid, job_id, cluster, project, user_name, job_name, gpus, gpu_model, productive_gpu_seconds,
       low_activity_gpu_seconds, sm_active_avg, gpus_never_active, fb_used_max_mib, fits_smaller, effective_cost,
       low_activity_cost, fits_smaller_cost
FROM ranked
WHERE rnk <= $top AND (low_activity_cost > 0 OR gpus_never_active > 0 OR fits_smaller IS NOT NULL)
ORDER BY currency, rnk
