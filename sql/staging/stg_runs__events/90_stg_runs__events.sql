SELECT * EXCLUDE (_file, _row) FROM staging.stg_runs__events
WHERE ts >= $day::DATE AND ts < $day::DATE + INTERVAL 1 DAY
