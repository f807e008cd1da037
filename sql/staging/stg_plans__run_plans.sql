-- Plans are not dated: every day sees all of them.
SELECT * EXCLUDE (_file, _row) FROM staging.stg_plans__run_plans WHERE $day::DATE IS NOT NULL
