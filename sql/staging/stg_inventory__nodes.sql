-- The inventory is not dated: every day sees all of it.
SELECT * EXCLUDE (_file, _row) FROM staging.stg_inventory__nodes WHERE $day::DATE IS NOT NULL
