-- What the warehouse took in, per source. Bill files that are not current (a later delivery repeats
-- them, a byte-identical copy, unreadable) are counted apart: their rows are not in the warehouse.
SELECT source, count(*) AS files, sum(rows_staged) AS rows_in, sum(rows_quarantined) AS quarantined,
       count(*) FILTER (status = 'superseded') AS superseded, count(*) FILTER (status = 'duplicate') AS duplicates,
       count(*) FILTER (status = 'unreadable') AS unreadable,
       min(first_day) AS first_day, max(last_day) AS last_day
FROM ops.landed_files GROUP BY source ORDER BY source
