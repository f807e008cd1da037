-- Rolls the validated long samples of one file (registered as `dcgm_samples`) up per GPU-minute.
SELECT
    $file                                   AS _file,
    CAST(timestamp AS DATE)                 AS day,
    date_trunc('minute', timestamp)         AS minute_ts,
    hostname, gpu, gpu_instance,
    any_value(uuid)                         AS uuid,
    any_value(model_name)                   AS model_name,
    hpc_job,
    count(DISTINCT timestamp)::INTEGER      AS samples,
    min(timestamp)                          AS first_sample_ts,
    max(timestamp)                          AS last_sample_ts,
    min(value) FILTER (metric = 'DCGM_FI_DEV_GPU_UTIL')            AS gpu_util_min,
    max(value) FILTER (metric = 'DCGM_FI_DEV_GPU_UTIL')            AS gpu_util_max,
    avg(value) FILTER (metric = 'DCGM_FI_DEV_GPU_UTIL')            AS gpu_util_avg,
    max(value) FILTER (metric = 'DCGM_FI_PROF_SM_ACTIVE')          AS sm_active_max,
    avg(value) FILTER (metric = 'DCGM_FI_PROF_SM_ACTIVE')          AS sm_active_avg,
    avg(value) FILTER (metric = 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE') AS tensor_active_avg,
    avg(value) FILTER (metric = 'DCGM_FI_DEV_POWER_USAGE')         AS power_avg_w,
    max(value) FILTER (metric = 'DCGM_FI_DEV_FB_USED')             AS fb_used_max_mib
FROM dcgm_samples
GROUP BY ALL
