-- The rows of a batch's files $dirty that do not stage: contract failures and implausible times, by
-- file and row, for the contract and the plausibility rule to word (models/landing.py DcgmSample,
-- pipelines/ingest/plausible.py).
SELECT c.f, c._row
FROM dcgm_checked c
LEFT JOIN dcgm_batch_implausible i ON i.f = c.f AND i.timestamp = c.timestamp
WHERE c.f IN (SELECT unnest($dirty)) AND (c.bad OR (c.ok AND i.f IS NOT NULL))
ORDER BY c.f, c._row
