-- The bill lines whose charge period overlaps the UTC day $day.
SELECT * EXCLUDE (_file, _row, source)
FROM staging.stg_focus__bill_lines
WHERE overlaps_day(charge_period_start, charge_period_end, $day)
