-- The DCGM rollup, one definition for both ways a file is staged (the per-file parser and the
-- set-based batch pass): long samples → one row per scrape → one row per GPU-minute.

-- dcgm_scrapes('rows'): rows (f, timestamp, hostname, gpu, gpu_instance, hpc_job, uuid, model_name,
-- metric, value, ok, bad, sentinel) → one row per file `f` × scrape time × GPU × job label with the
-- metrics side by side, from its ok rows, and how many of its rows were ok, bad and sentinels.
CREATE OR REPLACE MACRO dcgm_scrapes(rows) AS TABLE
SELECT f, timestamp, hostname, gpu, gpu_instance, hpc_job,
       any_value(uuid)       FILTER (ok) AS uuid,
       any_value(model_name) FILTER (ok) AS model_name,
       max(value) FILTER (ok AND metric = 'DCGM_FI_DEV_GPU_UTIL')            AS gpu_util,
       max(value) FILTER (ok AND metric = 'DCGM_FI_PROF_SM_ACTIVE')          AS sm_active,
       max(value) FILTER (ok AND metric = 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE') AS tensor_active,
       max(value) FILTER (ok AND metric = 'DCGM_FI_DEV_POWER_USAGE')         AS power_w,
       max(value) FILTER (ok AND metric = 'DCGM_FI_DEV_FB_USED')             AS fb_used_mib,
       max(value) FILTER (ok AND metric = 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION') AS energy_mj,
       count(*) FILTER (ok)       AS ok_rows,
       count(*) FILTER (bad)      AS bad_rows,
       count(*) FILTER (sentinel) AS sentinel_rows
FROM query_table(rows)
GROUP BY f, timestamp, hostname, gpu, gpu_instance, hpc_job;

-- dcgm_minutes('scrapes'): scrapes as dcgm_scrapes gives them → one row per file `f` × GPU-minute ×
-- job label, the staging columns of stg_dcgm__gpu_minutes but `_file`, from the scrapes with an ok row
-- (`samples` 0: none had one, and the minute stages nothing), and the minute's ok, bad and sentinel
-- rows. A row per scrape first, so `samples` counts scrapes exactly without a DISTINCT. A scrape
-- without an ok row has no metrics, uuid or model (they are read from ok rows only), so only the
-- scrape counts and times need saying which scrapes count.
CREATE OR REPLACE MACRO dcgm_minutes(scrapes) AS TABLE
SELECT
    f,
    CAST(timestamp AS DATE)         AS day,
    date_trunc('minute', timestamp) AS minute_ts,
    hostname, gpu, gpu_instance,
    any_value(uuid)                 AS uuid,
    any_value(model_name)           AS model_name,
    hpc_job,
    count(*) FILTER (ok_rows > 0)::INTEGER AS samples,
    min(timestamp) FILTER (ok_rows > 0) AS first_sample_ts,
    max(timestamp) FILTER (ok_rows > 0) AS last_sample_ts,
    min(timestamp) FILTER (gpu_util > 0) AS first_busy_ts,
    max(timestamp) FILTER (gpu_util > 0) AS last_busy_ts,
    min(gpu_util)                   AS gpu_util_min,
    max(gpu_util)                   AS gpu_util_max,
    avg(gpu_util)                   AS gpu_util_avg,
    max(sm_active)                  AS sm_active_max,
    avg(sm_active)                  AS sm_active_avg,
    avg(tensor_active)              AS tensor_active_avg,
    avg(power_w)                    AS power_avg_w,
    max(fb_used_mib)                AS fb_used_max_mib,
    -- the energy counter (mJ since the driver loaded) at the minute's first and last scrape that has it
    arg_min(energy_mj, timestamp) FILTER (energy_mj IS NOT NULL) AS energy_first_mj,
    arg_max(energy_mj, timestamp) FILTER (energy_mj IS NOT NULL) AS energy_last_mj,
    sum(ok_rows)                    AS ok_rows,
    sum(bad_rows)                   AS bad_rows,
    sum(sentinel_rows)              AS sentinel_rows
FROM query_table(scrapes)
GROUP BY f, day, minute_ts, hostname, gpu, gpu_instance, hpc_job;

-- minute_is_idle(util_max, sm_max, sm_threshold): a GPU-minute is idle when its highest GPU_UTIL is 0
-- or its highest SM_ACTIVE is below the threshold (docs/ledger.md#categories); the ledger and the
-- hung-job alerts judge a minute by this one rule.
CREATE OR REPLACE MACRO minute_is_idle(util_max, sm_max, sm_threshold) AS
    coalesce(util_max = 0, FALSE) OR coalesce(sm_max < sm_threshold, FALSE);

-- gpu_minutes_near(day, sm_threshold, lookback_minutes, min_minutes): the GPU-minutes of the day in
-- staging, of whole GPUs and of MIG instances (gpu_instance set), widened before midnight by
-- `lookback_minutes` and after it by `min_minutes` so an idle stretch crossing midnight is judged whole;
-- `idle` by minute_is_idle, `has_reading` when the minute read GPU_UTIL or SM_ACTIVE at all (a MIG-mode
-- GPU in nvidia-smi, `[N/A]`, has power and memory but no utilisation: never idle, and no sample of
-- use either), and the under-use lens's activity: SM activity, else GPU utilisation as a fraction where
-- a GPU has no profiling.
CREATE OR REPLACE MACRO gpu_minutes_near(of_day, sm_threshold, lookback_minutes, min_minutes) AS TABLE
SELECT hostname, gpu, gpu_instance, hpc_job, minute_ts, first_sample_ts, last_sample_ts, first_busy_ts,
       last_busy_ts,
       minute_is_idle(gpu_util_max, sm_active_max, sm_threshold) AS idle,
       gpu_util_max IS NOT NULL OR sm_active_max IS NOT NULL AS has_reading,
       coalesce(sm_active_avg, gpu_util_avg / 100) AS activity, tensor_active_avg, fb_used_max_mib
FROM staging.stg_dcgm__gpu_minutes
WHERE day BETWEEN of_day::DATE - 1 AND of_day::DATE + 1
  AND minute_ts >= of_day::DATE - to_minutes(lookback_minutes::BIGINT)
  AND minute_ts < of_day::DATE + INTERVAL 1 DAY + to_minutes(min_minutes::BIGINT);
