-- Rolls the validated long samples of one file (registered as `dcgm_samples`) up per GPU-minute:
-- first one row per sample (scrape time × GPU × job label, metrics side by side), then per minute,
-- so `samples` counts scrapes exactly without a DISTINCT.
WITH samples AS (
    SELECT timestamp, hostname, gpu, gpu_instance, hpc_job,
           any_value(uuid) AS uuid, any_value(model_name) AS model_name,
           max(value) FILTER (metric = 'DCGM_FI_DEV_GPU_UTIL')            AS gpu_util,
           max(value) FILTER (metric = 'DCGM_FI_PROF_SM_ACTIVE')          AS sm_active,
           max(value) FILTER (metric = 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE') AS tensor_active,
           max(value) FILTER (metric = 'DCGM_FI_DEV_POWER_USAGE')         AS power_w,
           max(value) FILTER (metric = 'DCGM_FI_DEV_FB_USED')             AS fb_used_mib
    FROM dcgm_samples
    GROUP BY timestamp, hostname, gpu, gpu_instance, hpc_job
)
SELECT
    $file                           AS _file,
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
GROUP BY ALL
