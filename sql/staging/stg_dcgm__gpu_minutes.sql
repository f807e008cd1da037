-- DCGM telemetry rolled up per GPU, job label and minute. The raw samples stay where they landed
-- (Parquet, read in place); the warehouse keeps this rollup, which still knows the first and last
-- sample of each minute so gaps between scrapes can be measured exactly.
CREATE TABLE IF NOT EXISTS staging.stg_dcgm__gpu_minutes (
    _file           VARCHAR NOT NULL,
    day             DATE NOT NULL,
    minute_ts       TIMESTAMP NOT NULL,   -- UTC, start of the minute
    hostname        VARCHAR NOT NULL,
    gpu             INTEGER NOT NULL,
    gpu_instance    VARCHAR,              -- MIG instance id, NULL for a whole GPU
    uuid            VARCHAR,
    model_name      VARCHAR,
    hpc_job         VARCHAR,              -- job label of the series (hpc_job, or namespace/pod), NULL when none
    samples         INTEGER NOT NULL,     -- distinct sample timestamps in the minute
    first_sample_ts TIMESTAMP NOT NULL,
    last_sample_ts  TIMESTAMP NOT NULL,
    first_busy_ts   TIMESTAMP,            -- first and last sample of the minute with GPU_UTIL > 0: where
    last_busy_ts    TIMESTAMP,            -- an idle stretch starts or ends inside a minute
    gpu_util_min    DOUBLE,               -- DCGM_FI_DEV_GPU_UTIL, %
    gpu_util_max    DOUBLE,
    gpu_util_avg    DOUBLE,
    sm_active_max   DOUBLE,               -- DCGM_FI_PROF_SM_ACTIVE, 0–1
    sm_active_avg   DOUBLE,
    tensor_active_avg DOUBLE,             -- DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, 0–1
    power_avg_w     DOUBLE,
    fb_used_max_mib DOUBLE,
    energy_first_mj DOUBLE,               -- DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ, a counter) at the
    energy_last_mj  DOUBLE                -- minute's first and last scrape that has it
);
-- a warehouse staged before the energy counter was read gains its columns (NULL: power is used there)
ALTER TABLE staging.stg_dcgm__gpu_minutes ADD COLUMN IF NOT EXISTS energy_first_mj DOUBLE;
ALTER TABLE staging.stg_dcgm__gpu_minutes ADD COLUMN IF NOT EXISTS energy_last_mj DOUBLE;
