-- What the warehouse observed over the 30 days ending on $day, for the inputs a plan leaves out
-- (docs/plans.md#where-the-inputs-come-from), one row per plan. Only marts are read, so `gpuledger plan`
-- can run this step on the published warehouse. Each figure comes with the days it is based on.
CREATE OR REPLACE TEMP TABLE plan_defaults AS
WITH window_days AS (
    SELECT $day::DATE - 29 AS first_day, $day::DATE AS last_day
),
-- the effective cost of a GPU-hour of each GPU model, per billing currency, over the window
-- (marts.fct_gpu_price_daily: the one price of a GPU-hour)
model_price AS (
    SELECT gpu_model_canonical, billing_currency, cost, gpu_seconds, first_day, last_day, price_per_gpu_hour
    FROM marts.fct_gpu_price_daily WHERE day = $day
),
-- a plan that names its currency takes that currency's price; else the currency most of the model's
-- GPU-hours were billed in
price AS (
    SELECT k.run_id, m.billing_currency, m.first_day, m.last_day, m.gpu_seconds / 3600 AS gpu_hours,
           m.price_per_gpu_hour AS price
    FROM plan_keys k JOIN model_price m ON m.gpu_model_canonical = k.gpu_model_canonical
    WHERE k.currency IS NULL OR k.currency = m.billing_currency
    QUALIFY row_number() OVER (PARTITION BY k.run_id ORDER BY m.gpu_seconds DESC, m.billing_currency) = 1
),
run_hours AS (
    SELECT sum(gpu_seconds) / 3600 AS gpu_hours, min(day) AS first_day, max(day) AS last_day
    FROM marts.fct_run_efficiency_daily, window_days w WHERE day BETWEEN w.first_day AND w.last_day
),
interruptions AS (
    SELECT r.interrupted_job_uid, sum(r.restart_gpu_seconds) AS restart_gpu_seconds, min(r.day) AS first_day,
           max(r.day) AS last_day
    FROM marts.fct_rerun_loss r, window_days w WHERE r.day BETWEEN w.first_day AND w.last_day
    GROUP BY r.interrupted_job_uid
),
-- a restart in wall-clock seconds: its GPU-seconds over the GPUs of the interrupted job
restarts AS (
    SELECT i.*, i.restart_gpu_seconds / j.gpus AS restart_seconds
    FROM interruptions i
    JOIN (SELECT job_uid, max(gpus) AS gpus FROM marts.fct_job_cost, window_days w
          WHERE day BETWEEN w.first_day - 7 AND w.last_day GROUP BY job_uid) j  -- a job's days: near its interruption
      ON j.job_uid = i.interrupted_job_uid
    WHERE i.restart_gpu_seconds > 0 AND j.gpus > 0
),
mtbf AS (
    SELECT count(*) AS interruptions,
           least(min(i.first_day), (SELECT first_day FROM run_hours)) AS first_day,
           greatest(max(i.last_day), (SELECT last_day FROM run_hours)) AS last_day,
           (SELECT gpu_hours FROM run_hours) AS run_gpu_hours,
           -- nullif: Spark works the row out before HAVING drops it, and ANSI mode fails a division by 0
           (SELECT gpu_hours FROM run_hours) / nullif(count(*), 0) AS mtbf_gpu_hours
    FROM interruptions i HAVING count(*) > 0
),
restart AS (
    SELECT count(*) AS interruptions, median(restart_seconds) AS restart_seconds, min(first_day) AS first_day,
           max(last_day) AS last_day
    FROM restarts HAVING count(*) > 0
),
saves AS (
    SELECT s.project, s.save_seconds, s.day FROM marts.fct_checkpoint_saves s, window_days w
    WHERE s.day BETWEEN w.first_day AND w.last_day AND s.save_seconds IS NOT NULL
),
-- the project's own saves where it has some, else every run's
checkpoint AS (
    SELECT k.run_id,
           CASE WHEN count(s.save_seconds) > 0 THEN 'project' ELSE 'fleet' END AS scope,
           coalesce(median(s.save_seconds), (SELECT median(save_seconds) FROM saves)) AS checkpoint_seconds,
           CASE WHEN count(s.save_seconds) > 0 THEN count(s.save_seconds) ELSE (SELECT count(*) FROM saves) END AS saves,
           coalesce(min(s.day), (SELECT min(day) FROM saves)) AS first_day,
           coalesce(max(s.day), (SELECT max(day) FROM saves)) AS last_day
    FROM plan_keys k LEFT JOIN saves s ON s.project = k.project
    GROUP BY k.run_id
)
SELECT k.run_id, w.first_day AS window_first_day, w.last_day AS window_last_day,
       p.price AS observed_price_per_gpu_hour, p.billing_currency AS price_currency, p.gpu_hours AS price_gpu_hours,
       p.first_day AS price_first_day, p.last_day AS price_last_day,
       c.checkpoint_seconds AS observed_checkpoint_seconds, c.scope AS checkpoint_scope, c.saves AS checkpoint_saves,
       c.first_day AS checkpoint_first_day, c.last_day AS checkpoint_last_day,
       r.restart_seconds AS observed_restart_seconds, r.interruptions AS restart_interruptions, r.first_day AS restart_first_day,
       r.last_day AS restart_last_day,
       m.mtbf_gpu_hours AS observed_mtbf_gpu_hours, m.interruptions AS mtbf_interruptions, m.run_gpu_hours AS mtbf_run_gpu_hours,
       m.first_day AS mtbf_first_day, m.last_day AS mtbf_last_day
FROM plan_keys k CROSS JOIN window_days w
LEFT JOIN price p USING (run_id)
LEFT JOIN checkpoint c USING (run_id)
LEFT JOIN restart r ON TRUE
LEFT JOIN mtbf m ON TRUE;
