-- Rolls the validated long samples of one file (registered as `dcgm_samples`, every row ok) up per
-- GPU-minute into staging, by the rollup both staging paths share (sql/macros/50_dcgm_rollup.sql).
CREATE OR REPLACE TEMP VIEW dcgm_file_rows AS
SELECT 0 AS f, timestamp, hostname, gpu, gpu_instance, hpc_job, uuid, model_name, metric, value,
       TRUE AS ok, FALSE AS bad, FALSE AS sentinel
FROM dcgm_samples;

CREATE OR REPLACE TEMP TABLE dcgm_file_scrapes AS SELECT * FROM dcgm_scrapes('dcgm_file_rows');

INSERT INTO staging.stg_dcgm__gpu_minutes BY NAME
SELECT $file AS _file, * EXCLUDE (f, ok_rows, bad_rows, sentinel_rows) FROM dcgm_minutes('dcgm_file_scrapes');

DROP TABLE dcgm_file_scrapes;
DROP VIEW dcgm_file_rows;
