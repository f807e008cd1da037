-- A sample of a bill file's lines that tells whether another file repeats them: the 256 smallest
-- distinct 64-bit hashes (upper half of MD5) of its lines' keys. A line's key is what identifies it
-- from one delivery to the next (pipelines/landing/bill_deliveries.py, LINE_KEY); a file repeating every
-- line of another holds every one of the other's hashes at or below its own 256th smallest.
-- Input: bill_lines_in(line_key VARCHAR, ...); quarantined lines have no key.
SELECT DISTINCT (md5_number(line_key) >> 64)::UBIGINT AS h
FROM bill_lines_in
WHERE line_key IS NOT NULL
ORDER BY h
LIMIT 256
