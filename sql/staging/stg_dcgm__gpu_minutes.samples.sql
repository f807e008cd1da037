-- A batch's rows per sample (file × scrape time × GPU × job label), the metrics side by side, from its
-- ok rows only; how many rows of each sample were ok, bad or sentinels rides along, so one pass over
-- the files says what each file staged, quarantined and dropped.
CREATE OR REPLACE TEMP TABLE dcgm_batch_samples AS
SELECT f, timestamp, hostname, gpu, gpu_instance, hpc_job,
       any_value(uuid)       FILTER (ok) AS uuid,
       any_value(model_name) FILTER (ok) AS model_name,
       max(value) FILTER (ok AND metric = 'DCGM_FI_DEV_GPU_UTIL')            AS gpu_util,
       max(value) FILTER (ok AND metric = 'DCGM_FI_PROF_SM_ACTIVE')          AS sm_active,
       max(value) FILTER (ok AND metric = 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE') AS tensor_active,
       max(value) FILTER (ok AND metric = 'DCGM_FI_DEV_POWER_USAGE')         AS power_w,
       max(value) FILTER (ok AND metric = 'DCGM_FI_DEV_FB_USED')             AS fb_used_mib,
       count(*) FILTER (ok)       AS ok_rows,
       count(*) FILTER (bad)      AS bad_rows,
       count(*) FILTER (sentinel) AS sentinel_rows
FROM dcgm_checked
GROUP BY f, timestamp, hostname, gpu, gpu_instance, hpc_job
