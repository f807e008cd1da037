-- What the warehouse took in, per source.
SELECT source, count(*) AS files, sum(rows_staged) AS rows_in, sum(rows_quarantined) AS quarantined,
       min(first_day) AS first_day, max(last_day) AS last_day
FROM ops.landed_files GROUP BY source ORDER BY source
