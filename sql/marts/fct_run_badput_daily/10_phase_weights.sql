-- The badput of each run (docs/ledger.md#the-badput-of-a-run), part 1: each run job's productive
-- GPU-time of $day, per host and hour, divided into kind weights in the exact share-unit milliseconds of
-- intermediate.int_gpu_seconds (gpu_share_ms), so that the kinds of a job-host-hour sum to its
-- productive gpu_share_ms exactly and its productive cost can be split over them with split_exactly.
--
-- Time kinds are intervals of the job's window: startup (start to the job's first step event, when the
-- job is no restart: a restart's is rerun_loss already), checkpoint_save (checkpoint_started to the next
-- checkpoint_saved of the run and job), evaluation (eval_started to the next eval_done); where they
-- overlap the first of that order wins, and none reaches into the job's lost window (rerun_loss). The
-- category intervals inside an hour are not known here, only the hour's productive total, so each kind
-- takes min(its overlap, productive left) in that order: the kinds never exceed productive, and where a
-- phase overlaps idle or unmonitored time the kind may take productive time beside it (documented).
-- data_wait and exposed_communication are the steps' own timers' share of the hour's rest.

CREATE OR REPLACE TEMP TABLE badput_jobs AS
SELECT job_uid, job_id, run_id, start_ts, end_eff, restart_until, lost_from,
       greatest(start_ts, $day::DATE::TIMESTAMP) AS w_start,
       -- what a phase may cover: the job's day, before its lost window
       least(end_eff, $day::DATE + INTERVAL 1 DAY, coalesce(lost_from, end_eff)) AS phase_end
FROM intermediate.int_job_allocations
WHERE day = $day AND run_id IS NOT NULL;

-- every phase interval of every run job, clipped to what a phase may cover; kind_order: 1 startup,
-- 2 checkpoint_save, 3 evaluation
CREATE OR REPLACE TEMP TABLE badput_phase_intervals AS
WITH first_steps AS (
    SELECT j.job_uid, min(e.ts) AS first_step_at
    FROM badput_jobs j
    JOIN staging.stg_runs__events e ON e.job_id = j.job_id AND e.run_id = j.run_id AND e.event = 'step'
                                   AND e.ts >= j.start_ts AND e.ts <= j.end_eff
    WHERE j.restart_until IS NULL
    GROUP BY j.job_uid
),
marks AS (
    -- a phase's start and the event after it of the same run, job and pair of events (a save or an
    -- evaluation spanning midnight is seen from both days)
    SELECT run_id, job_id, event, ts,
           lead(event) OVER w AS next_event, lead(ts) OVER w AS next_ts
    FROM staging.stg_runs__events
    WHERE event IN ('checkpoint_started', 'checkpoint_saved', 'eval_started', 'eval_done') AND job_id IS NOT NULL
      AND ts >= $day::DATE - INTERVAL 1 DAY AND ts < $day::DATE + INTERVAL 2 DAY
    WINDOW w AS (PARTITION BY run_id, job_id, CASE WHEN event LIKE 'checkpoint%' THEN 'c' ELSE 'e' END
                 ORDER BY ts, event DESC)
),
phases AS (
    SELECT run_id, job_id, ts AS s, next_ts AS e,
           CASE event WHEN 'checkpoint_started' THEN 2 ELSE 3 END AS kind_order
    FROM marks
    WHERE (event = 'checkpoint_started' AND next_event = 'checkpoint_saved')
       OR (event = 'eval_started' AND next_event = 'eval_done')
),
raw AS (
    SELECT j.job_uid, j.start_ts AS s, f.first_step_at AS e, 1 AS kind_order
    FROM badput_jobs j JOIN first_steps f USING (job_uid)
    UNION ALL
    SELECT j.job_uid, p.s, p.e, p.kind_order
    FROM badput_jobs j
    JOIN phases p ON p.run_id = j.run_id AND p.job_id = j.job_id AND p.s >= j.start_ts AND p.s < j.end_eff
)
SELECT r.job_uid, greatest(r.s, j.w_start) AS s, least(r.e, j.phase_end) AS e, r.kind_order
FROM raw r JOIN badput_jobs j USING (job_uid)
WHERE least(r.e, j.phase_end) > greatest(r.s, j.w_start);

-- each job-hour's milliseconds of each time kind: the intervals cut at the hours and at each other's
-- edges, each elementary segment going to the first kind covering it
CREATE OR REPLACE TEMP TABLE badput_phase_ms AS
WITH hourly AS (
    SELECT i.job_uid, i.kind_order, h.hour_ts,
           greatest(i.s, h.hour_ts) AS s, least(i.e, h.hour_ts + INTERVAL 1 HOUR) AS e
    FROM badput_phase_intervals i,
         unnest(generate_series(date_trunc('hour', i.s), i.e, INTERVAL 1 HOUR)) AS h(hour_ts)
),
pieces AS (
    SELECT * FROM hourly WHERE e > s
),
edges AS (
    SELECT job_uid, hour_ts, s AS t FROM pieces
    UNION SELECT job_uid, hour_ts, e FROM pieces
),
segments AS (
    SELECT job_uid, hour_ts, t AS s, lead(t) OVER (PARTITION BY job_uid, hour_ts ORDER BY t) AS e FROM edges
),
won AS (
    SELECT g.job_uid, g.hour_ts, g.s, g.e, min(p.kind_order) AS kind_order
    FROM segments g
    JOIN pieces p ON p.job_uid = g.job_uid AND p.hour_ts = g.hour_ts AND p.s <= g.s AND p.e >= g.e
    WHERE g.e IS NOT NULL AND g.e > g.s
    GROUP BY g.job_uid, g.hour_ts, g.s, g.e
)
SELECT job_uid, hour_ts,
       coalesce(sum(epoch_ms(e) - epoch_ms(s)) FILTER (kind_order = 1), 0)::HUGEINT AS startup_ms,
       coalesce(sum(epoch_ms(e) - epoch_ms(s)) FILTER (kind_order = 2), 0)::HUGEINT AS checkpoint_ms,
       coalesce(sum(epoch_ms(e) - epoch_ms(s)) FILTER (kind_order = 3), 0)::HUGEINT AS evaluation_ms
FROM won GROUP BY job_uid, hour_ts;

-- the step timers per job-hour, in milliseconds: the steps ending in the hour that carry a timer and
-- whose seconds are known (a step's timers are at most its seconds: the parser refuses more)
CREATE OR REPLACE TEMP TABLE badput_step_timers AS
SELECT j.job_uid, date_trunc('hour', e.ts) AS hour_ts,
       sum(round(least(coalesce(e.data_seconds, 0), e.step_seconds) * 1000))::HUGEINT AS data_ms,
       sum(round(least(coalesce(e.comm_seconds, 0),
                       e.step_seconds - least(coalesce(e.data_seconds, 0), e.step_seconds)) * 1000))::HUGEINT AS comm_ms,
       sum(round(e.step_seconds * 1000))::HUGEINT AS step_ms
FROM badput_jobs j
JOIN staging.stg_runs__events e ON e.job_id = j.job_id AND e.run_id = j.run_id AND e.event = 'step'
                               AND e.ts > j.start_ts AND e.ts <= j.end_eff
WHERE e.ts >= $day::DATE AND e.ts < $day::DATE + INTERVAL 1 DAY
  AND e.step_seconds IS NOT NULL AND (e.data_seconds IS NOT NULL OR e.comm_seconds IS NOT NULL)
GROUP BY ALL;

-- the weights: per job, host and hour, productive gpu_share_ms divided into the seven productive
-- kinds, in the job's share units on the host (its hour's gpu_share_ms over the window's milliseconds)
CREATE OR REPLACE TEMP TABLE badput_weights AS
WITH hosts AS (
    SELECT g.job_uid, j.run_id, g.hostname, g.hour_ts,
           sum(g.gpu_share_ms) AS share_ms,
           coalesce(sum(g.gpu_share_ms) FILTER (g.category = 'productive'), 0) AS productive_ms,
           coalesce(sum(g.gpu_seconds) FILTER (g.category = 'productive'), 0) AS productive_seconds,
           epoch_ms(least(any_value(j.end_eff), $day::DATE + INTERVAL 1 DAY, g.hour_ts + INTERVAL 1 HOUR))
             - epoch_ms(greatest(any_value(j.w_start), g.hour_ts)) AS window_ms
    FROM intermediate.int_gpu_seconds g JOIN badput_jobs j USING (job_uid)
    WHERE g.day = $day
    GROUP BY g.job_uid, j.run_id, g.hostname, g.hour_ts
),
timed AS (
    SELECT h.*, h.share_ms // nullif(h.window_ms, 0) AS units,
           coalesce(p.startup_ms, 0) AS startup_ms, coalesce(p.checkpoint_ms, 0) AS checkpoint_ms,
           coalesce(p.evaluation_ms, 0) AS evaluation_ms,
           coalesce(t.data_ms, 0) AS data_ms, coalesce(t.comm_ms, 0) AS comm_ms, coalesce(t.step_ms, 0) AS step_ms
    FROM hosts h
    LEFT JOIN badput_phase_ms p ON p.job_uid = h.job_uid AND p.hour_ts = h.hour_ts
    LEFT JOIN badput_step_timers t ON t.job_uid = h.job_uid AND t.hour_ts = h.hour_ts
    WHERE h.productive_ms > 0
),
s1 AS (
    SELECT *, least(startup_ms * coalesce(units, 0), productive_ms) AS startup_w FROM timed
),
s2 AS (
    SELECT *, least(checkpoint_ms * coalesce(units, 0), productive_ms - startup_w) AS checkpoint_w FROM s1
),
s3 AS (
    SELECT *, least(evaluation_ms * coalesce(units, 0), productive_ms - startup_w - checkpoint_w) AS evaluation_w FROM s2
),
s4 AS (
    SELECT *, productive_ms - startup_w - checkpoint_w - evaluation_w AS rest_w FROM s3
),
s5 AS (
    SELECT *,
           CASE WHEN step_ms > 0 THEN rest_w * least(data_ms, step_ms) // step_ms ELSE 0 END AS data_w,
           CASE WHEN step_ms > 0 THEN rest_w * least(comm_ms, step_ms - least(data_ms, step_ms)) // step_ms ELSE 0 END
               AS comm_w
    FROM s4
),
kinds AS (
    SELECT job_uid, run_id, hostname, hour_ts, productive_seconds, 'startup' AS kind, 1 AS kind_order, startup_w AS weight FROM s5
    UNION ALL SELECT job_uid, run_id, hostname, hour_ts, productive_seconds, 'checkpoint_save', 2, checkpoint_w FROM s5
    UNION ALL SELECT job_uid, run_id, hostname, hour_ts, productive_seconds, 'evaluation', 3, evaluation_w FROM s5
    UNION ALL SELECT job_uid, run_id, hostname, hour_ts, productive_seconds, 'data_wait', 4, data_w FROM s5
    UNION ALL SELECT job_uid, run_id, hostname, hour_ts, productive_seconds, 'exposed_communication', 5, comm_w FROM s5
    UNION ALL SELECT job_uid, run_id, hostname, hour_ts, productive_seconds, 'goodput', 6,
                     rest_w - data_w - comm_w FROM s5
),
seconds AS (
    SELECT *, CASE WHEN kind = 'goodput' THEN NULL ELSE share_ms_seconds(weight) END AS kind_seconds FROM kinds
)
-- GPU-seconds: each kind's share_ms as seconds, goodput what is left of the productive seconds, so that
-- the kinds add up to them exactly (all are multiples of 2^-16 seconds, which DOUBLE adds exactly)
SELECT job_uid, run_id, hostname, hour_ts, kind, kind_order, weight::HUGEINT AS weight,
       coalesce(kind_seconds,
                productive_seconds - sum(coalesce(kind_seconds, 0)) OVER (PARTITION BY job_uid, hostname, hour_ts))::DOUBLE
           AS gpu_seconds
FROM seconds
