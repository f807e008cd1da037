-- A batch's samples (dcgm_batch_samples) per GPU-minute, as stg_dcgm__gpu_minutes.rollup.sql rolls up
-- one file's: only samples with staged rows, none at an implausible time; `_file` from the batch's files.
WITH samples AS (
    SELECT s.*
    FROM dcgm_batch_samples s
    ANTI JOIN dcgm_batch_implausible i ON i.f = s.f AND i.timestamp = s.timestamp
    WHERE s.ok_rows > 0
), minutes AS (
    SELECT
        f,
        CAST(timestamp AS DATE)         AS day,
        date_trunc('minute', timestamp) AS minute_ts,
        hostname, gpu, gpu_instance,
        any_value(uuid)                 AS uuid,
        any_value(model_name)           AS model_name,
        hpc_job,
        count(*)::INTEGER               AS samples,
        min(timestamp)                  AS first_sample_ts,
        max(timestamp)                  AS last_sample_ts,
        min(timestamp) FILTER (gpu_util > 0) AS first_busy_ts,
        max(timestamp) FILTER (gpu_util > 0) AS last_busy_ts,
        min(gpu_util)                   AS gpu_util_min,
        max(gpu_util)                   AS gpu_util_max,
        avg(gpu_util)                   AS gpu_util_avg,
        max(sm_active)                  AS sm_active_max,
        avg(sm_active)                  AS sm_active_avg,
        avg(tensor_active)              AS tensor_active_avg,
        avg(power_w)                    AS power_avg_w,
        max(fb_used_mib)                AS fb_used_max_mib
    FROM samples
    GROUP BY f, day, minute_ts, hostname, gpu, gpu_instance, hpc_job
)
SELECT b.file AS _file, m.* EXCLUDE (f)
FROM minutes m JOIN dcgm_batch_files b ON b.f = m.f
