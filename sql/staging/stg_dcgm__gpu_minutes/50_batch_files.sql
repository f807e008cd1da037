-- What each file of a batch staged, quarantined and dropped, in landing rows, the days its staged rows
-- touch (for ops.landed_files), and whether its times are plausible for sure. Whether a time is
-- plausible is pipelines/ingest/plausible.py's to say, by the median and quartiles of the file's times;
-- this only proves that none can be implausible there, from the first and last staged time: none is
-- before $floor, so the median lies between them, and no time is more whole days from it than the
-- file spans, which is at most $slack_days, the least it may be. A file not proven (a time before
-- $floor, or over a year of telemetry) is the per-file parser's, which judges every time.
SELECT f,
       sum(ok_rows)       AS staged,
       sum(bad_rows)      AS bad,
       sum(sentinel_rows) AS sentinels,
       CAST(min(first_sample_ts) AS DATE) AS first_day,
       CAST(max(last_sample_ts) AS DATE)  AS last_day,
       coalesce(min(first_sample_ts) >= $floor
                AND (epoch_us(max(last_sample_ts)) - epoch_us(min(first_sample_ts))) // 86400000000 <= $slack_days,
                TRUE) AS plausible
FROM dcgm_batch_minutes
GROUP BY f
