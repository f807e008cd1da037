-- The objects of the snapshots dated $day (a day without one is priced from an earlier snapshot:
-- intermediate.int_storage_objects looks back).
SELECT * EXCLUDE (_file, _row, source, delivery) FROM staging.stg_storage__objects WHERE snapshot_day = $day::DATE
