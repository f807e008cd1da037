-- Every job allocation that held GPUs on $day, one row per job (requeued instances are separate
-- jobs: same JobIDRaw, another start). A job exported by several daily sacct files keeps its latest
-- record: one that has an End, else the one from the latest file. A job still running at the last
-- export runs to the end of the day. Whether a failed job was resumed is decided by the jobs of its run
-- that started up to a week later, as far as they have landed: re-running a day after a late resume
-- lands turns its `failed_job` into `rerun_loss`.
--
-- Runs: a job belongs to a run through trainer events that carry its JobID, else `run_id=` in its
-- Comment. A job is *interrupted* when it ended in a failure state and a later job of its run exists;
-- it is *failed* when it ended in a failure state and no later job resumed its run.
--   rerun loss, interrupted job: from the last checkpoint save completed before it ended (not before
--     its start) to its end; without trainer events for the run, the whole job (an estimate);
--   rerun loss, resuming job: from its start to its first step event after the restored checkpoint.
WITH tag_teams AS (
    -- without a config, a project's team is the `team` tag seen beside its `project` tag on bills
    SELECT tag_value(tags, $project_keys) AS project, min(tag_value(tags, $team_keys)) AS team
    FROM intermediate.int_bill_line_hours
    WHERE day = $day AND tag_value(tags, $project_keys) IS NOT NULL AND tag_value(tags, $team_keys) IS NOT NULL
    GROUP BY 1
),
latest AS (
    SELECT *,
           row_number() OVER (PARTITION BY cluster, job_key, start_ts
                              ORDER BY (end_ts IS NOT NULL) DESC, _file DESC, _row DESC) AS pick
    FROM staging.stg_scheduler__job_allocations
    -- a week ahead: whether a failed job was resumed is known only from the jobs that came after it
    WHERE NOT is_step AND start_ts IS NOT NULL AND start_ts < $day::DATE + INTERVAL 8 DAY
),
jobs AS (
    SELECT cluster || ':' || job_key || ':' || strftime(start_ts, '%Y%m%dT%H%M%S') AS job_uid,
           * EXCLUDE (pick),
           coalesce(end_ts, $day::DATE + INTERVAL 1 DAY) AS end_eff
    FROM latest
    -- a week back: the attempts before a day's jobs (their rerun windows); older history is left out
    -- so a day's sequencing and event joins stay bounded as the warehouse grows
    WHERE pick = 1 AND (end_ts IS NULL OR end_ts >= $day::DATE - INTERVAL 8 DAY)
),
event_runs AS (
    SELECT job_id, min(run_id) AS run_id FROM staging.stg_runs__events WHERE job_id IS NOT NULL GROUP BY job_id
),
in_runs AS (
    SELECT j.*, coalesce(er.run_id, j.run_id) AS run,
           j.state IN ('FAILED', 'NODE_FAIL', 'OUT_OF_MEMORY', 'TIMEOUT', 'CANCELLED', 'REQUEUED', 'PREEMPTED',
                       'BOOT_FAIL', 'DEADLINE') AND j.end_ts IS NOT NULL AS ended_badly
    FROM jobs j
    LEFT JOIN event_runs er ON er.job_id = j.job_id
),
attempts AS (
    -- The allocations of a run that start together are one attempt: the pods of a multi-node job on
    -- Kubernetes (one per node) or a Slurm job (one allocation). A run is a sequence of attempts.
    SELECT coalesce(run, job_uid) AS run_key, start_ts,
           bool_or(ended_badly) AS ended_badly,
           min(job_uid) AS attempt_uid,
           list(job_id ORDER BY job_key) AS member_job_ids,
           max(end_ts) AS end_ts,
           arg_min(job_id, job_key) AS lead_job_id,
           arg_min(state, CASE WHEN ended_badly THEN 0 ELSE 1 END) AS state,
           arg_min(exit_code, CASE WHEN ended_badly THEN 0 ELSE 1 END) AS exit_code
    FROM in_runs GROUP BY 1, 2
),
sequenced_attempts AS (
    SELECT *,
           lead(attempt_uid) OVER w AS next_attempt_uid,
           lag(attempt_uid) OVER w AS prev_attempt_uid,
           lag(ended_badly) OVER w AS prev_ended_badly,
           lag(lead_job_id) OVER w AS prev_job_id,
           lag(end_ts) OVER w AS prev_end_ts,
           lag(state) OVER w AS prev_state,
           lag(exit_code) OVER w AS prev_exit_code
    FROM attempts
    WINDOW w AS (PARTITION BY run_key ORDER BY start_ts)
),
sequenced AS (
    SELECT j.*, a.attempt_uid, a.member_job_ids, a.next_attempt_uid AS next_job_uid,
           a.prev_attempt_uid AS prev_job_uid, a.prev_ended_badly, a.prev_job_id, a.prev_end_ts,
           a.prev_state, a.prev_exit_code
    FROM in_runs j
    JOIN sequenced_attempts a ON a.run_key = coalesce(j.run, j.job_uid) AND a.start_ts = j.start_ts
),
run_events AS (
    SELECT run_id, count(*) AS events FROM staging.stg_runs__events GROUP BY run_id
),
checkpoints AS (
    SELECT s.job_uid, max(e.ts) AS last_checkpoint_at, arg_max(e.step, e.ts) AS last_checkpoint_step
    FROM sequenced s
    JOIN staging.stg_runs__events e ON e.run_id = s.run AND e.event = 'checkpoint_saved' AND e.ts <= s.end_eff
    GROUP BY s.job_uid
),
restores AS (
    -- the resuming attempt's first step after the checkpoint it loaded (its first step if it logged no
    -- load); a multi-node attempt logs from one of its allocations, so its members share the events
    SELECT m.job_uid,
           min(st.ts) FILTER (st.ts >= coalesce(ld.loaded_at, m.start_ts)) AS first_step_at
    FROM (SELECT job_uid, start_ts, unnest(member_job_ids) AS member_job_id FROM sequenced) m
    LEFT JOIN (SELECT job_id, min(ts) AS loaded_at FROM staging.stg_runs__events
               WHERE event = 'checkpoint_loaded' GROUP BY job_id) ld ON ld.job_id = m.member_job_id
    JOIN staging.stg_runs__events st ON st.job_id = m.member_job_id AND st.event = 'step'
    GROUP BY m.job_uid
),
classified AS (
    SELECT s.*,
           s.ended_badly AND s.next_job_uid IS NOT NULL AND s.run IS NOT NULL AS interrupted,
           s.ended_badly AND (s.next_job_uid IS NULL OR s.run IS NULL) AS failed,
           coalesce(re.events, 0) > 0 AS has_events,
           c.last_checkpoint_at, c.last_checkpoint_step,
           r.first_step_at
    FROM sequenced s
    LEFT JOIN run_events re ON re.run_id = s.run
    LEFT JOIN checkpoints c USING (job_uid)
    LEFT JOIN restores r USING (job_uid)
)
SELECT $day::DATE AS day,
       c.job_uid, c._file AS source_file, c._row AS source_row, cluster, job_key, job_id, job_name, user_name, account, partition, state, exit_code,
       submit_ts, start_ts, end_ts, end_eff, run AS run_id,
       c.project,
       coalesce(config_lookup($project_teams, c.project), tt.team, c.project) AS team,
       gpus, gpu_slices, gpu_index, node_count, hosts,
       -- a notebook, an editor, a shell (policies.interactive): its idle time is priced by the idle timeout
       is_interactive_session(partition, qos, job_name, labels, $session_patterns) AS interactive,
       interrupted, failed,
       CASE WHEN interrupted AND has_events THEN greatest(start_ts, coalesce(last_checkpoint_at, start_ts))
            WHEN interrupted THEN start_ts END AS lost_from,
       last_checkpoint_at,
       last_checkpoint_step,
       CASE WHEN prev_ended_badly AND run IS NOT NULL AND first_step_at IS NOT NULL
            THEN least(first_step_at, end_eff) END AS restart_until,
       CASE WHEN prev_ended_badly AND run IS NOT NULL THEN prev_job_uid END AS resumes_job_uid,
       CASE WHEN prev_ended_badly AND run IS NOT NULL THEN prev_job_id END AS resumes_job_id,
       CASE WHEN prev_ended_badly AND run IS NOT NULL THEN prev_end_ts END AS resumes_interrupted_at,
       CASE WHEN prev_ended_badly AND run IS NOT NULL THEN prev_state || ' ' || coalesce(prev_exit_code, '') END
           AS resumes_cause,
       interrupted AND NOT has_events AS rerun_is_estimate
FROM (SELECT *, coalesce(config_lookup($account_projects, account), account, '_unallocated') AS project
      FROM classified) c
LEFT JOIN tag_teams tt ON tt.project = c.project
WHERE end_eff > $day::DATE AND start_ts < $day::DATE + INTERVAL 1 DAY
