-- Cost per day, team, user, ledger category and currency, as `sreport user top` gives it: the node-hour
-- cost and the costed GPU-seconds of each user's jobs (the job categories of marts.fct_cost_daily, so a
-- team's users add up to its jobs' part there), with the under-use lens on the `productive` rows: the
-- low-activity GPU-seconds and cost of those jobs (marts.fct_job_cost). A job with no user is `_unknown`.
WITH pieces AS (
    SELECT a.team, coalesce(j.user_name, '_unknown') AS user_name, a.category, a.billing_currency,
           sum(a.effective_cost) AS effective_cost, sum(a.billed_cost) AS billed_cost,
           sum(a.gpu_seconds) AS gpu_seconds, count(DISTINCT a.job_uid) AS jobs
    FROM intermediate.int_cost_allocations a
    JOIN intermediate.int_job_allocations j ON j.day = $day AND j.job_uid = a.job_uid
    WHERE a.day = $day AND a.job_uid IS NOT NULL
    GROUP BY ALL
),
lens AS (
    SELECT team, coalesce(user_name, '_unknown') AS user_name, billing_currency,
           sum(low_activity_gpu_seconds) AS low_activity_gpu_seconds, sum(low_activity_cost) AS low_activity_cost,
           sum(low_activity_billed_cost) AS low_activity_billed_cost
    FROM marts.fct_job_cost
    WHERE day = $day AND billing_currency IS NOT NULL
    GROUP BY ALL
)
SELECT $day::DATE AS day, p.team, p.user_name, p.category, p.billing_currency, p.jobs::INTEGER AS jobs,
       p.gpu_seconds::DOUBLE AS gpu_seconds,
       p.effective_cost::DECIMAL(38, 18) AS effective_cost, p.billed_cost::DECIMAL(38, 18) AS billed_cost,
       coalesce(l.low_activity_gpu_seconds, 0)::DOUBLE AS low_activity_gpu_seconds,
       coalesce(l.low_activity_cost, 0)::DECIMAL(38, 18) AS low_activity_cost,
       coalesce(l.low_activity_billed_cost, 0)::DECIMAL(38, 18) AS low_activity_billed_cost
FROM pieces p
-- the lens is on the productive rows: the GPU time that is no waste
LEFT JOIN marts.dim_ledger_categories k ON k.name = p.category
LEFT JOIN lens l ON l.team = p.team AND l.user_name = p.user_name AND l.billing_currency = p.billing_currency
                AND k.is_gpu AND NOT k.is_waste
WHERE p.effective_cost <> 0 OR p.billed_cost <> 0 OR p.gpu_seconds <> 0
