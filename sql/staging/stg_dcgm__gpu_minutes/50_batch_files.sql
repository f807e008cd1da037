-- What each file of a batch staged, quarantined and dropped, in landing rows, and the days its staged
-- rows touch (for ops.landed_files).
SELECT s.f,
       coalesce(sum(s.ok_rows) FILTER (i.f IS NULL), 0)  AS staged,
       coalesce(sum(s.ok_rows) FILTER (i.f IS NOT NULL), 0) AS implausible,
       sum(s.bad_rows)      AS bad,
       sum(s.sentinel_rows) AS sentinels,
       CAST(min(s.timestamp) FILTER (s.ok_rows > 0 AND i.f IS NULL) AS DATE) AS first_day,
       CAST(max(s.timestamp) FILTER (s.ok_rows > 0 AND i.f IS NULL) AS DATE) AS last_day
FROM dcgm_batch_samples s
LEFT JOIN dcgm_batch_implausible i ON i.f = s.f AND i.timestamp = s.timestamp
GROUP BY s.f
