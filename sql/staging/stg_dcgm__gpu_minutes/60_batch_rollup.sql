-- A batch's samples (dcgm_batch_samples) per GPU-minute by the rollup both staging paths share
-- (sql/macros/50_dcgm_rollup.sql): only samples with staged rows, none at an implausible time; `_file` from
-- the batch's files.
CREATE OR REPLACE TEMP VIEW dcgm_batch_staged AS
SELECT s.*
FROM dcgm_batch_samples s
ANTI JOIN dcgm_batch_implausible i ON i.f = s.f AND i.timestamp = s.timestamp
WHERE s.ok_rows > 0;

INSERT INTO staging.stg_dcgm__gpu_minutes BY NAME
SELECT b.file AS _file, m.* EXCLUDE (f)
FROM dcgm_minutes('dcgm_batch_staged') m JOIN dcgm_batch_files b ON b.f = m.f;

DROP VIEW dcgm_batch_staged;
