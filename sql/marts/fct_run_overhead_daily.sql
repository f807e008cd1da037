-- What a run spends around its work, per day (docs/ledger.md#queue-wait-and-checkpoint-interval):
-- the queue wait of its jobs (Submit to Start: time, not money), and its checkpoint interval against
-- the Young–Daly optimum for its observed MTBF, with the cost of the difference. One row per run and
-- billing currency of marts.fct_run_efficiency_daily; counts and waits sit on the first currency's row
-- (0 on the others), means on every row. NULL where unknown, never 0.
WITH run_rows AS (
    SELECT run_id, team, project, billing_currency, effective_cost,
           row_number() OVER (PARTITION BY run_id ORDER BY billing_currency) = 1 AS first_currency
    FROM marts.fct_run_efficiency_daily WHERE day = $day
),
day_jobs AS (
    SELECT * FROM intermediate.int_job_allocations WHERE day = $day AND run_id IS NOT NULL
),
jobs AS (
    SELECT run_id, count(*) AS jobs FROM day_jobs GROUP BY run_id
),
queue AS (
    -- jobs that started on the day with a known Submit (not after their Start)
    SELECT run_id,
           sum(epoch(start_ts) - epoch(submit_ts)) AS queue_wait_seconds,
           sum((epoch(start_ts) - epoch(submit_ts)) * gpus) / 3600 AS queue_wait_gpu_hours
    FROM day_jobs
    WHERE start_ts >= $day::DATE AND submit_ts IS NOT NULL AND submit_ts <= start_ts
    GROUP BY run_id
),
saves AS (
    -- the run's saves completed on the day (and the day before, for the interval to the first of the day)
    SELECT run_id, job_id, ts, lag(ts) OVER (PARTITION BY run_id, job_id ORDER BY ts) AS previous_ts
    FROM staging.stg_runs__events
    WHERE event = 'checkpoint_saved' AND ts >= $day::DATE - INTERVAL 1 DAY AND ts < $day::DATE + INTERVAL 1 DAY
),
intervals AS (
    SELECT run_id, count(*) AS checkpoints, avg(epoch(ts) - epoch(previous_ts)) AS checkpoint_interval_s
    FROM saves WHERE ts >= $day::DATE GROUP BY run_id
),
blocking AS (
    -- a blocking save: checkpoint_started to the next checkpoint_saved of the run and job
    SELECT run_id, avg(epoch(next_ts) - epoch(ts)) AS checkpoint_save_s
    FROM (SELECT run_id, event, ts, lead(event) OVER w AS next_event, lead(ts) OVER w AS next_ts
          FROM staging.stg_runs__events
          WHERE event IN ('checkpoint_started', 'checkpoint_saved') AND job_id IS NOT NULL
            AND ts >= $day::DATE - INTERVAL 1 DAY AND ts < $day::DATE + INTERVAL 1 DAY
          WINDOW w AS (PARTITION BY run_id, job_id ORDER BY ts, event DESC))
    WHERE event = 'checkpoint_started' AND next_event = 'checkpoint_saved' AND next_ts >= $day::DATE
    GROUP BY run_id
),
window_jobs AS (
    -- the run's attempts over the 7 days through $day, as far as the ledger has them: wall seconds
    -- held (an attempt of several allocations starting together counted once) and interruptions
    SELECT run_id, day, start_ts,
           max(epoch(least(end_eff, day + INTERVAL 1 DAY)) - epoch(greatest(start_ts, day::TIMESTAMP))) AS wall_s,
           bool_or(interrupted AND end_ts >= day AND end_ts < day + INTERVAL 1 DAY) AS interrupted_on_day
    FROM intermediate.int_job_allocations
    WHERE day BETWEEN $day::DATE - 6 AND $day::DATE AND run_id IS NOT NULL
    GROUP BY run_id, day, start_ts
),
failures AS (
    SELECT run_id, sum(wall_s) / nullif(count(*) FILTER (interrupted_on_day), 0) AS mtbf_s
    FROM window_jobs GROUP BY run_id
),
measured AS (
    SELECT r.*, j.jobs, q.queue_wait_seconds, q.queue_wait_gpu_hours, i.checkpoints, i.checkpoint_interval_s,
           b.checkpoint_save_s, f.mtbf_s
    FROM run_rows r
    LEFT JOIN jobs j USING (run_id)
    LEFT JOIN queue q USING (run_id)
    LEFT JOIN intervals i USING (run_id)
    LEFT JOIN blocking b USING (run_id)
    LEFT JOIN failures f USING (run_id)
),
optimum AS (
    SELECT *,
           CASE WHEN checkpoint_save_s > 0 AND mtbf_s > 0 THEN young_daly_seconds(checkpoint_save_s, mtbf_s) END
               AS young_daly_interval_s,
           -- restarts cost the same at any interval: R = 0 on both sides of the difference
           CASE WHEN checkpoint_save_s > 0 AND mtbf_s > 0 AND checkpoint_interval_s > 0
                THEN checkpoint_overhead(checkpoint_save_s, checkpoint_interval_s, 0, mtbf_s)
                     - failure_overhead(checkpoint_save_s, 0, mtbf_s) END AS excess_overhead
    FROM measured
)
SELECT $day::DATE AS day, run_id, team, project, billing_currency,
       CASE WHEN first_currency THEN coalesce(jobs, 0) ELSE 0 END::BIGINT AS jobs,
       CASE WHEN first_currency THEN queue_wait_seconds ELSE queue_wait_seconds * 0 END::DOUBLE AS queue_wait_seconds,
       CASE WHEN first_currency THEN queue_wait_gpu_hours ELSE queue_wait_gpu_hours * 0 END::DOUBLE AS queue_wait_gpu_hours,
       CASE WHEN first_currency THEN coalesce(checkpoints, 0) ELSE 0 END::BIGINT AS checkpoints,
       checkpoint_interval_s::DOUBLE AS checkpoint_interval_s,
       checkpoint_save_s::DOUBLE AS checkpoint_save_s,
       mtbf_s::DOUBLE AS mtbf_s,
       young_daly_interval_s::DOUBLE AS young_daly_interval_s,
       excess_overhead::DOUBLE AS checkpoint_excess_overhead,
       CASE WHEN excess_overhead IS NOT NULL
            THEN (effective_cost::DOUBLE * excess_overhead)::DECIMAL(38, 10) END AS checkpoint_interval_cost
FROM optimum
