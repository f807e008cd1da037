-- Each checkpoint save a trainer logged on the day (docs/plans.md#where-the-inputs-come-from): when it
-- completed (`checkpoint_saved` ts) and how long it took, from the step event it was taken at (the
-- latest step event of the same run, job and step before it, up to a day earlier) to its completion.
-- A save with no such step event has no duration. Plans without `checkpoint_seconds` use the median.
WITH saves AS (
    SELECT run_id, job_id, step, ts AS saved_at FROM staging.stg_runs__events
    WHERE event = 'checkpoint_saved' AND ts >= $day::DATE AND ts < $day::DATE + INTERVAL 1 DAY
),
steps AS (
    SELECT run_id, job_id, step, ts FROM staging.stg_runs__events
    WHERE event = 'step' AND ts >= $day::DATE - INTERVAL 1 DAY AND ts < $day::DATE + INTERVAL 1 DAY
),
timed AS (
    SELECT s.run_id, s.job_id, s.step, s.saved_at, max(st.ts) AS started_at
    FROM saves s
    LEFT JOIN steps st ON st.run_id = s.run_id AND st.job_id IS NOT DISTINCT FROM s.job_id AND st.step = s.step
                      AND st.ts <= s.saved_at
    GROUP BY ALL
),
projects AS (
    SELECT run_id, arg_max(project, ts) AS project FROM staging.stg_runs__events
    WHERE event = 'run_config' GROUP BY run_id
)
SELECT $day::DATE AS day, t.run_id, p.project, coalesce(config_lookup($project_teams, p.project), p.project) AS team,
       t.job_id, t.step, t.saved_at, t.started_at,
       epoch(t.saved_at - t.started_at)::DOUBLE AS save_seconds
FROM timed t LEFT JOIN projects p USING (run_id)
