-- What each UTC day's share of one bill file is made of, as a number that changes when any line
-- touching the day changes: per day, the sum (mod 2^64) of a stable 64-bit hash (the upper half of
-- MD5) of each such line's text. Sums do not depend on which file a line sits in, so a delivery
-- that repeats earlier lines leaves their days' digests as they were.
-- A line touches the days of [start, end); a zero-length line, the day of its start (as the bill's
-- split into hours does).
-- Input: bill_lines_in(line VARCHAR, ps TIMESTAMP, pe TIMESTAMP).
SELECT strftime(day, '%Y-%m-%d') AS day, (sum(h) % 18446744073709551616)::UBIGINT AS digest
FROM (
    SELECT (md5_number(line) >> 64)::UBIGINT AS h,
           unnest(generate_series(date_trunc('day', ps),
                                  date_trunc('day', CASE WHEN pe > ps THEN pe - INTERVAL 1 MICROSECOND ELSE ps END),
                                  INTERVAL 1 DAY)) AS day
    FROM bill_lines_in
)
GROUP BY day
