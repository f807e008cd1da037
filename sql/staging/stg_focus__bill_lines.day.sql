-- The bill lines whose charge period overlaps the UTC day $day.
SELECT * EXCLUDE (_file, _row, source)
FROM staging.stg_focus__bill_lines
WHERE charge_period_start < $day::DATE + INTERVAL 1 DAY
  AND (charge_period_end > $day::DATE OR (charge_period_end = charge_period_start AND charge_period_start >= $day::DATE))
