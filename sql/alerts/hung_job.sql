-- hung_job and idle_session alerts as of $as_of (docs/plans.md#alerts): a job whose GPUs all sat idle
-- in a row while it held them — a batch job for $hung_minutes (hung_job), an interactive session
-- (is_interactive_session: a notebook, an editor, a shell) for $idle_session_minutes (idle_session).
-- One row per job allocation, its latest such stretch: an episode (pipelines/alerts/raising.py) that
-- holds while the stretch goes on (resolved_at NULL) and ends when the job ends or gets busy
-- (resolved_at = the stretch's end). Only data before $as_of is read, and every figure looks back only,
-- so the live sensor (as_of = now, today's landing files) and the daily run (as_of = the day's end, the
-- staged warehouse) find the same job, hence the same alert_id.
--
-- A minute is idle as the ledger judges it (minute_is_idle, sql/macros/50_dcgm_rollup.sql): its highest GPU_UTIL
-- is 0 or its highest SM_ACTIVE is below idle.sm_active_threshold. The job's series on a host are those labelled with
-- its JobID (or JobIDRaw); on a host without job labels, all of the host's GPUs. The job is idle in a
-- minute when every series it has there is. A stretch continues across a telemetry gap of up to three
-- scrapes; its ends are refined to the samples as allocated_idle's are: it starts one scrape after the
-- last busy sample before it and ends at the first busy sample after it (so far: one scrape after its
-- last idle sample). Telemetry is read 36 hours back: a stretch that starts at that edge began earlier
-- (`since_edge`): its figures are only the window's part, so an episode raised before keeps its own.
-- cost_at_stake: the stretch's GPU-seconds so far at the job's nodes' cost per GPU-second over the
-- 7 days before (marts.fct_node_hourly), in the currency most of that cost is in; an estimate at an
-- average rate, so kept to 1e-9.
WITH jobs AS (
    SELECT * EXCLUDE (pick) FROM (
        SELECT cluster, job_key, job_id, account, start_ts, gpus, gpu_slices, hosts, job_name,
               is_interactive_session(partition, qos, job_name, labels, $session_patterns) AS interactive,
               lower(regexp_extract(alloc_tres, '(\d+g\.\d+gb(\+me)?)', 1, 'i')) AS mig_profile,
               CASE WHEN end_ts <= $as_of::TIMESTAMP THEN end_ts END AS end_ts,
               row_number() OVER (PARTITION BY cluster, job_key, start_ts
                                  ORDER BY (end_ts IS NOT NULL) DESC, _file DESC, _row DESC) AS pick
        FROM staging.stg_scheduler__job_allocations
        WHERE NOT is_step AND start_ts < $as_of::TIMESTAMP
          AND (end_ts IS NULL OR end_ts > $as_of::TIMESTAMP - INTERVAL 36 HOUR)
          AND (coalesce(gpus, 1) > 0 OR len(gpu_slices) > 0)
    ) WHERE pick = 1
),
minutes AS (
    SELECT hostname, gpu, gpu_instance, hpc_job, minute_ts, first_sample_ts, last_sample_ts, first_busy_ts, last_busy_ts,
           minute_is_idle(gpu_util_max, sm_active_max, $idle_sm_threshold) AS idle
    FROM staging.stg_dcgm__gpu_minutes
    WHERE day BETWEEN ($as_of::TIMESTAMP - INTERVAL 36 HOUR)::DATE AND $as_of::TIMESTAMP::DATE
      AND minute_ts >= $as_of::TIMESTAMP - INTERVAL 36 HOUR
      AND minute_ts + INTERVAL 1 MINUTE <= $as_of::TIMESTAMP
),
labelled_hosts AS (
    SELECT DISTINCT hostname FROM minutes WHERE hpc_job IS NOT NULL
),
job_hosts AS (
    SELECT j.cluster, j.job_key, j.start_ts, h.hostname,
           -- once per job host, not per minute joined to it below
           h.hostname IN (SELECT hostname FROM labelled_hosts) AS labelled
    FROM jobs j, unnest(j.hosts) AS h(hostname)
),
-- each job host's series: on a labelled host the ones labelled with its JobID or JobIDRaw, on another
-- every whole GPU's. Joined by host and label (equalities, so a fleet's minutes are matched by hash,
-- not each job held against each of its host's series); a series labelled with both ids is met twice,
-- which the min, max and bool_and below do not count.
job_series AS (
    SELECT jh.cluster, jh.job_key, jh.start_ts, jh.hostname, j.job_id AS hpc_job FROM job_hosts jh
    JOIN jobs j USING (cluster, job_key, start_ts) WHERE jh.labelled
    UNION ALL
    SELECT cluster, job_key, start_ts, hostname, job_key FROM job_hosts WHERE labelled
),
-- the job's minutes: its labelled series on a labelled host, every whole GPU's series on another
job_minutes AS (
    SELECT s.cluster, s.job_key, s.start_ts, s.minute_ts,
           min(s.first_sample_ts) AS first_sample_ts, max(s.last_sample_ts) AS last_sample_ts,
           min(s.first_busy_ts) AS first_busy_ts, max(s.last_busy_ts) AS last_busy_ts, bool_and(s.idle) AS idle
    FROM (SELECT js.cluster, js.job_key, js.start_ts, m.*
          FROM job_series js JOIN minutes m ON m.hostname = js.hostname AND m.hpc_job = js.hpc_job
          UNION ALL
          SELECT jh.cluster, jh.job_key, jh.start_ts, m.*
          FROM job_hosts jh JOIN minutes m ON m.hostname = jh.hostname
          WHERE NOT jh.labelled AND m.hpc_job IS NULL AND m.gpu_instance IS NULL) s
    JOIN jobs j USING (cluster, job_key, start_ts)
    WHERE s.minute_ts >= date_trunc('minute', j.start_ts) AND s.minute_ts < coalesce(j.end_ts, $as_of::TIMESTAMP)
    GROUP BY ALL
),
ordered AS (
    SELECT *, lag(idle) OVER w AS prev_idle, lag(last_sample_ts) OVER w AS prev_last,
           lag(minute_ts) OVER w AS prev_minute, lag(last_busy_ts) OVER w AS prev_last_busy,
           lead(minute_ts) OVER w AS next_minute, lead(first_busy_ts) OVER w AS next_first_busy,
           max(minute_ts) OVER (PARTITION BY cluster, job_key, start_ts) AS last_minute
    FROM job_minutes
    WINDOW w AS (PARTITION BY cluster, job_key, start_ts ORDER BY minute_ts)
),
numbered AS (
    SELECT *, sum(CASE WHEN idle AND prev_idle AND epoch(first_sample_ts) - epoch(prev_last) <= 3 * $scrape_seconds
                       THEN 0 ELSE 1 END) OVER (PARTITION BY cluster, job_key, start_ts ORDER BY minute_ts) AS stretch_no
    FROM ordered
),
stretches AS (
    SELECT cluster, job_key, start_ts AS job_start, stretch_no,
           -- one scrape after the last busy sample of the minute before, else the first idle sample
           arg_min(CASE WHEN prev_minute = minute_ts - INTERVAL 1 MINUTE AND prev_last_busy IS NOT NULL
                        THEN prev_last_busy + to_seconds($scrape_seconds::BIGINT) ELSE first_sample_ts END,
                   minute_ts) AS idle_from,
           -- the first busy sample of the minute after, else one scrape after the last idle sample
           arg_max(CASE WHEN next_minute = minute_ts + INTERVAL 1 MINUTE AND next_first_busy IS NOT NULL
                        THEN next_first_busy ELSE last_sample_ts + to_seconds($scrape_seconds::BIGINT) END,
                   minute_ts) AS idle_to,
           max(minute_ts) AS last_idle_minute, any_value(last_minute) AS last_minute
    FROM numbered
    WHERE idle
    GROUP BY cluster, job_key, start_ts, stretch_no
),
hung AS (
    SELECT j.*, s.job_start,
           greatest(s.idle_from, j.start_ts) AS idle_from,
           least(s.idle_to, coalesce(j.end_ts, $as_of::TIMESTAMP), $as_of::TIMESTAMP) AS idle_to,
           coalesce(config_lookup($account_projects, j.account), j.account, '_unallocated') AS project,
           s.idle_from <= $as_of::TIMESTAMP - INTERVAL 36 HOUR + INTERVAL 10 MINUTE AS since_edge,
           -- still idle: the stretch reaches the job's last minute of telemetry and the job has not ended
           s.last_idle_minute = s.last_minute AND j.end_ts IS NULL AS ongoing,
           CASE WHEN j.interactive THEN $idle_session_minutes ELSE $hung_minutes END AS after_minutes
    FROM stretches s JOIN jobs j ON j.cluster = s.cluster AND j.job_key = s.job_key AND j.start_ts = s.job_start
),
long_enough AS (
    SELECT *, epoch(idle_to) - epoch(idle_from) AS idle_seconds,
           -- share units (models/mig_profiles.py: 7000 a GPU): whole GPUs, else the slices held
           coalesce(nullif(gpus, 0) * 7000, nullif(list_sum(gpu_slices), 0), len(hosts) * 8 * 7000) AS gpu_units,
           coalesce(nullif(gpus, 0) * 7000, nullif(list_sum(gpu_slices), 0), len(hosts) * 8 * 7000) / 7000.0 AS gpu_count,
           CASE WHEN mig_profile <> '' THEN CASE WHEN len(gpu_slices) > 1 THEN len(gpu_slices) || ' × ' ELSE '' END
                                            || 'MIG ' || mig_profile END AS mig
    FROM hung
    WHERE epoch(idle_to) - epoch(idle_from) >= 60 * after_minutes
    -- one episode per job allocation: its latest stretch
    QUALIFY row_number() OVER (PARTITION BY cluster, job_key, job_start ORDER BY idle_from DESC) = 1
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
    SELECT h.cluster, h.job_key, h.job_start, min(r.billing_currency) AS billing_currency, avg(r.rate) AS rate
    FROM (SELECT cluster, job_key, job_start, unnest(hosts) AS hostname FROM long_enough) h
    JOIN node_rates r USING (hostname)
    GROUP BY ALL
)
SELECT CASE WHEN l.interactive THEN 'idle_session' ELSE 'hung_job' END AS kind,
       CASE WHEN l.interactive THEN 'warning'
            WHEN l.idle_seconds >= 4 * 60 * l.after_minutes THEN 'critical' ELSE 'warning' END AS severity,
       'job' AS subject_type, l.cluster || '/' || l.job_id AS subject,
       printf('idle since %s', strftime(l.idle_from, '%Y-%m-%dT%H:%M:%SZ')) AS threshold,
       coalesce(config_lookup($project_teams, l.project), l.project) AS team,
       (l.idle_seconds * l.gpu_count * r.rate)::DECIMAL(38, 9)::DECIMAL(38, 18) AS cost_at_stake, r.billing_currency,
       CASE WHEN l.interactive THEN printf('session %s (job %s on %s, %s)', coalesce(nullif(l.job_name, ''), '?'),
                                           l.job_id, l.cluster, array_to_string(l.hosts, ','))
            ELSE printf('job %s (%s, on %s)', l.job_id, l.cluster, array_to_string(l.hosts, ',')) END
       || CASE WHEN l.ongoing THEN printf(' has held %s idle for %s, since %s', gpu_units_text(l.gpu_units, l.mig),
                                          duration_text(l.idle_seconds), strftime(l.idle_from, '%Y-%m-%d %H:%M UTC'))
               ELSE printf(' held %s idle for %s, %s to %s', gpu_units_text(l.gpu_units, l.mig),
                           duration_text(l.idle_seconds), strftime(l.idle_from, '%Y-%m-%d %H:%M'),
                           CASE WHEN l.idle_to::DATE = l.idle_from::DATE THEN strftime(l.idle_to, '%H:%M UTC')
                                ELSE strftime(l.idle_to, '%Y-%m-%d %H:%M UTC') END) END
       || CASE WHEN r.rate IS NOT NULL
               THEN printf(', about %s %s%s', round(l.idle_seconds * l.gpu_count * r.rate, 2)::VARCHAR,
                           r.billing_currency, CASE WHEN l.ongoing THEN ' so far' ELSE '' END)
               ELSE '' END AS message,
       json_object('cluster', l.cluster, 'job_id', l.job_id, 'job_key', l.job_key, 'job_start', l.job_start,
                   'job_name', l.job_name, 'hosts', l.hosts, 'gpus', l.gpu_count, 'idle_from', l.idle_from,
                   'idle_to', l.idle_to, 'idle_gpu_seconds', l.idle_seconds * l.gpu_count, 'project', l.project)::VARCHAR AS details,
       l.idle_from + to_minutes(l.after_minutes::BIGINT) AS opened_at,
       CASE WHEN NOT l.ongoing THEN l.idle_to END AS resolved_at,
       l.since_edge
FROM long_enough l
LEFT JOIN job_rates r ON r.cluster = l.cluster AND r.job_key = l.job_key AND r.job_start = l.job_start
