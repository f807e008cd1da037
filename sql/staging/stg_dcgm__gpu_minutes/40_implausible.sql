-- Implausible times in a batch (the rule of pipelines/ingest/plausible.py, per file over its ok rows):
-- a time before $floor, or more than max($slack_days, three interquartile ranges) days from the median
-- of the file's times at or after $floor. Quantiles as polars takes them there: the median averages the
-- middle two times (then truncated to the microsecond), a quartile is the time at the nearest rank.
CREATE OR REPLACE TEMP TABLE dcgm_batch_bounds AS
WITH times AS (
    SELECT f, epoch_us(timestamp) AS t, sum(ok_rows) AS n
    FROM dcgm_batch_samples
    WHERE ok_rows > 0 AND timestamp >= $floor
    GROUP BY f, t
), ranked AS (
    SELECT f, t, sum(n) OVER (PARTITION BY f ORDER BY t) AS upto, sum(n) OVER (PARTITION BY f) AS total
    FROM times
), at_ranks AS (
    -- the time at 1-based rank k is the first whose running count reaches k
    SELECT f,
           min(t) FILTER (upto >= (total + 1) // 2)      AS mid_lo,
           min(t) FILTER (upto >= total // 2 + 1)        AS mid_hi,
           min(t) FILTER (upto >= (total + 1) // 4 + 1)  AS q1,
           min(t) FILTER (upto >= (3 * total - 1) // 4 + 1) AS q3
    FROM ranked
    GROUP BY f
)
SELECT f,
       trunc((mid_lo + mid_hi) / 2)::BIGINT AS median_us,
       greatest($slack_days, trunc(3 * ((q3 - q1) / 86400e6)))::BIGINT AS allowed_days
FROM at_ranks;

CREATE OR REPLACE TEMP TABLE dcgm_batch_implausible AS
SELECT s.f, s.timestamp, sum(s.ok_rows) AS ok_rows
FROM dcgm_batch_samples s LEFT JOIN dcgm_batch_bounds b ON b.f = s.f
WHERE s.ok_rows > 0
  AND (s.timestamp < $floor OR abs(epoch_us(s.timestamp) - b.median_us) // 86400000000 > b.allowed_days)
GROUP BY s.f, s.timestamp
