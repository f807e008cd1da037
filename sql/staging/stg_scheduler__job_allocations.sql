-- The job records that held resources on the UTC day $day, or were submitted on it.
SELECT * EXCLUDE (_file, _row)
FROM staging.stg_scheduler__job_allocations
WHERE (start_ts < $day::DATE + INTERVAL 1 DAY AND (end_ts IS NULL OR end_ts >= $day::DATE))
   OR (submit_ts >= $day::DATE AND submit_ts < $day::DATE + INTERVAL 1 DAY)
