-- step_time_regression alerts as of $as_of (docs/plans.md#alerts): a run whose step time stays above
-- $step_time_ratio × its own baseline for at least $step_time_minutes. Read from the trainer's step
-- events before $as_of (36 hours back); every figure looks back only, so the live sensor and the daily run
-- find the same run, hence the same alert_id. One row per run, its latest slow stretch: an episode that
-- holds while the run's latest step events are slow (resolved_at NULL) and ends with the stretch (a fast
-- step event again, or no step event for $step_time_minutes: resolved_at = its last slow event).
--
-- A step event's step time is the time since the job's previous step event over the steps between them.
-- Its smoothed step time is the median over it and the job's two step events before it, so one long gap
-- (a checkpoint save, a data-loader stall) is no regression. Its baseline is the run's median step time
-- over the $step_time_baseline_minutes that end $step_time_minutes before it (at least 10 step events),
-- so a regression is measured against the run as it was just before, not against a run it never was. A
-- regressed stretch is a run of consecutive step events whose smoothed time is above ratio × baseline; it
-- starts where the first of them began stepping slowly (its previous event), and is raised once it spans
-- $step_time_minutes. extra GPU-seconds = (smoothed step time − the stretch's first baseline) × steps ×
-- the job's GPUs, over the stretch so far; cost_at_stake prices them at the job's nodes' cost per
-- GPU-second over the 7 days before (marts.fct_node_hourly): an estimate at an average rate, kept to 1e-9.
WITH steps AS (
    SELECT run_id, job_id, ts, step,
           lag(ts) OVER w AS prev_ts, step - lag(step) OVER w AS steps
    FROM staging.stg_runs__events
    WHERE event = 'step' AND ts <= $as_of::TIMESTAMP
      AND ts > $as_of::TIMESTAMP - INTERVAL 36 HOUR AND job_id IS NOT NULL
    WINDOW w AS (PARTITION BY run_id, job_id ORDER BY ts, step)
),
timed AS (
    SELECT *, (epoch(ts) - epoch(prev_ts)) / steps AS step_time
    FROM steps WHERE steps > 0
),
-- the job's smoothed step time (ROWS: its own events) and the run's baseline (RANGE over ts: every event
-- of the run, whichever job, from $step_time_minutes + $step_time_baseline_minutes before up to, not
-- including, $step_time_minutes before; a microsecond is the TIMESTAMP's resolution). Window frames, not
-- a self-join: one sort per window instead of a join's pairs (the test replays 288 ticks).
smoothed AS (
    SELECT run_id, job_id, ts, prev_ts, steps, step_time,
           median(step_time) OVER w AS smooth, count(*) OVER w AS n,
           median(step_time) OVER b AS baseline, count(step_time) OVER b AS baseline_events
    FROM timed
    WINDOW w AS (PARTITION BY run_id, job_id ORDER BY ts, step ROWS 2 PRECEDING),
           b AS (PARTITION BY run_id ORDER BY ts
                 RANGE BETWEEN to_minutes(($step_time_minutes + $step_time_baseline_minutes)::BIGINT) PRECEDING
                       AND to_minutes($step_time_minutes::BIGINT) + INTERVAL 1 MICROSECOND PRECEDING)
),
baselined AS (
    -- one row per distinct event figure, as the self-join's GROUP BY ALL gave: events alike in every
    -- column (three or more of a job's step events at one ts) are one, its baseline events counted per each
    SELECT run_id, job_id, ts, prev_ts, steps, step_time, smooth, n,
           any_value(baseline) AS baseline, sum(baseline_events)::BIGINT AS baseline_events
    FROM smoothed
    GROUP BY ALL
),
flagged AS (
    SELECT *, n = 3 AND baseline_events >= 10 AND smooth > $step_time_ratio * baseline AS slow
    FROM baselined
),
numbered AS (
    SELECT *, sum(CASE WHEN slow THEN 0 ELSE 1 END) OVER (PARTITION BY run_id ORDER BY ts) AS stretch_no
    FROM flagged
),
stretches AS (
    SELECT run_id, stretch_no, arg_min(prev_ts, (ts, prev_ts)) AS slow_from, max(ts) AS slow_to,
           arg_min(baseline, ts) AS baseline, median(smooth) AS median_step_time, count(*) AS events,
           sum(steps) AS steps, list(DISTINCT job_id ORDER BY job_id) AS job_ids,
           -- per job: its slow steps and their (smoothed) time, priced against the stretch's baseline below
           list({'job_id': job_id, 'seconds': smooth * steps, 'steps': steps} ORDER BY ts, job_id, prev_ts, steps) AS extras,
           any_value(run_last) AS run_last
    FROM (SELECT *, max(ts) OVER (PARTITION BY run_id) AS run_last FROM numbered)
    WHERE slow
    GROUP BY run_id, stretch_no
    HAVING epoch(max(ts)) - epoch(arg_min(prev_ts, (ts, prev_ts))) >= 60 * $step_time_minutes
    -- one episode per run: its latest stretch
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY slow_from DESC, stretch_no DESC) = 1
),
jobs AS (
    SELECT * EXCLUDE (pick) FROM (
        SELECT cluster, job_id, account, gpus, hosts,
               row_number() OVER (PARTITION BY job_id ORDER BY start_ts DESC, (end_ts IS NOT NULL) DESC,
                                  _file DESC, _row DESC) AS pick
        FROM staging.stg_scheduler__job_allocations
        WHERE NOT is_step AND start_ts < $as_of::TIMESTAMP
          AND job_id IN (SELECT unnest(job_ids) FROM stretches)
    ) WHERE pick = 1
),
node_rates AS (
    SELECT hostname, arg_max(billing_currency, cost) AS billing_currency,
           arg_max(cost / nullif(gpu_seconds, 0), cost) AS rate
    FROM (SELECT hostname, billing_currency, sum(effective_cost) AS cost, sum(gpu_seconds) AS gpu_seconds
          FROM marts.fct_node_hourly
          WHERE day BETWEEN $as_of::TIMESTAMP::DATE - 7 AND $as_of::TIMESTAMP::DATE - 1
          GROUP BY ALL)
    GROUP BY ALL
),
job_rates AS (
    SELECT j.job_id, min(r.billing_currency) AS billing_currency, avg(r.rate) AS rate
    FROM (SELECT job_id, unnest(hosts) AS hostname FROM jobs) j JOIN node_rates r USING (hostname)
    GROUP BY ALL
),
per_job AS (
    SELECT s.run_id, s.stretch_no, e.job_id, sum(e.seconds - s.baseline * e.steps) AS extra_seconds
    FROM stretches s, unnest(s.extras) AS x(e)
    GROUP BY ALL
),
costed AS (
    SELECT p.run_id, p.stretch_no,
           sum(p.extra_seconds * coalesce(j.gpus, 0)) AS extra_gpu_seconds,
           sum(p.extra_seconds * coalesce(j.gpus, 0) * r.rate) AS extra_cost,
           min(r.billing_currency) AS billing_currency,
           flatten(list(j.hosts)) AS hosts, min(j.account) AS account
    FROM per_job p
    LEFT JOIN jobs j USING (job_id)
    LEFT JOIN job_rates r USING (job_id)
    GROUP BY ALL
),
raised AS (
    SELECT s.*, c.extra_gpu_seconds, c.extra_cost, c.billing_currency,
           list_sort(list_distinct(c.hosts)) AS hosts,
           coalesce(config_lookup($account_projects, c.account), c.account,
                    (SELECT min(project) FROM staging.stg_runs__events e
                     WHERE e.run_id = s.run_id AND e.event = 'run_config' AND e.ts <= $as_of::TIMESTAMP),
                    '_unallocated') AS project
    FROM stretches s JOIN costed c USING (run_id, stretch_no)
)
SELECT 'step_time_regression' AS kind,
       CASE WHEN median_step_time >= 2 * baseline THEN 'critical' ELSE 'warning' END AS severity,
       'run' AS subject_type, run_id AS subject,
       printf('slow since %s', strftime(slow_from, '%Y-%m-%dT%H:%M:%SZ')) AS threshold,
       coalesce(config_lookup($project_teams, project), project) AS team,
       extra_cost::DECIMAL(38, 9)::DECIMAL(38, 18) AS cost_at_stake, billing_currency,
       printf('run %s %s in %.1f s against its usual %.1f s (×%.2f) for %s, since %s, on %s: %.0f extra GPU-seconds%s',
              run_id, CASE WHEN ongoing THEN 'steps' ELSE 'stepped' END, median_step_time, baseline,
              median_step_time / baseline, duration_text(epoch(slow_to) - epoch(slow_from)),
              strftime(slow_from, '%Y-%m-%d %H:%M UTC'),
              coalesce(array_to_string(hosts, ','), 'unknown hosts'), extra_gpu_seconds,
              CASE WHEN extra_cost IS NOT NULL
                   THEN printf(', about %s %s', round(extra_cost, 2)::VARCHAR, billing_currency) ELSE '' END) AS message,
       json_object('hosts', hosts, 'job_ids', job_ids, 'slow_from', slow_from, 'slow_to', slow_to,
                   'baseline_step_seconds', baseline, 'median_step_seconds', median_step_time,
                   'steps', steps, 'extra_gpu_seconds', extra_gpu_seconds, 'project', project)::VARCHAR AS details,
       slow_from + to_minutes($step_time_minutes::BIGINT) AS opened_at,
       CASE WHEN NOT ongoing THEN slow_to END AS resolved_at,
       since_edge
FROM (SELECT *,
             -- the run's latest step event is slow, and recent: a run that stopped stepping is no longer slow
             slow_to = run_last AND run_last > $as_of::TIMESTAMP - to_minutes($step_time_minutes::BIGINT) AS ongoing,
             slow_from <= $as_of::TIMESTAMP - INTERVAL 36 HOUR
                          + to_minutes(($step_time_minutes + $step_time_baseline_minutes)::BIGINT) AS since_edge
      FROM raised)
