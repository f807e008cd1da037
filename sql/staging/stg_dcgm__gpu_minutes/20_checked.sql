-- The DCGM landing contract (models/landing.py DcgmSample), row by row over a batch of long Parquet
-- files: `dcgm_raw` is their rows with the columns under our names (f = the file's place in the batch,
-- _row = its 1-based row). Every row is exactly one of
--   sentinel  DCGM's "not supported" value (>= the sentinel floor and finite): no reading, counted, dropped
--   bad       a contract failure, by dcgm_sample_fails(...): the contract's own checks as SQL
--             (Contract.sql_failed), made by pipelines/ingest/dcgm_batch.py before this runs
--   ok        staged
-- and the labels are read as the per-file parser reads them (pipelines/ingest/dcgm.py): trimmed of
-- Unicode white space, the null spellings are no label, a pod is `namespace/pod`.
-- Trimming with a character set is costly per row, so only text that starts or ends with a character
-- that could be white space (below '!', or from U+0085 up) is trimmed; and a label that needs no trim
-- and is longer than any null spelling (nearly every one) is taken as it is, without looking for it
-- among them. `ord` reads the first character.
CREATE OR REPLACE TEMP MACRO dcgm_trim(x) AS (
    CASE WHEN ord(x) <= 32 OR ord(x) >= 133 OR ord(x[-1]) <= 32 OR ord(x[-1]) >= 133
         THEN trim(x, getvariable('dcgm_white_space')) ELSE x END
);
CREATE OR REPLACE TEMP MACRO dcgm_plain(x) AS (
    strlen(x) > getvariable('dcgm_null_token_bytes') AND ord(x) BETWEEN 33 AND 132 AND ord(x[-1]) BETWEEN 33 AND 132
);
CREATE OR REPLACE TEMP MACRO dcgm_label(x) AS (
    CASE WHEN dcgm_plain(CAST(x AS VARCHAR)) THEN CAST(x AS VARCHAR)
         WHEN list_contains(getvariable('dcgm_null_tokens'), dcgm_trim(CAST(x AS VARCHAR))) THEN NULL
         ELSE dcgm_trim(CAST(x AS VARCHAR)) END
);
CREATE OR REPLACE TEMP VIEW dcgm_checked AS
WITH typed AS (
    SELECT f, _row, timestamp,
           dcgm_label(hostname)          AS hostname,
           TRY_CAST(gpu AS INTEGER)      AS gpu,
           dcgm_label(gpu_instance)      AS gpu_instance,
           dcgm_label(uuid)              AS uuid,
           dcgm_label(model_name)        AS model_name,
           coalesce(dcgm_label(hpc_job),
                    CASE WHEN dcgm_label(pod) IS NOT NULL
                         THEN concat_ws('/', dcgm_label(namespace), dcgm_label(pod)) END) AS hpc_job,
           dcgm_trim(metric)            AS metric,
           CAST(value AS DOUBLE)         AS value
    FROM dcgm_raw
), flagged AS (
    SELECT *,
           coalesce(value >= getvariable('dcgm_sentinel_min') AND isfinite(value), FALSE) AS sentinel,
           dcgm_sample_fails(timestamp, hostname, gpu, metric, value) AS failed
    FROM typed
)
SELECT * EXCLUDE (failed), failed AND NOT sentinel AS bad, NOT failed AND NOT sentinel AS ok
FROM flagged
