-- Trainer events (runs/**/*.jsonl), one row per event line.
CREATE TABLE IF NOT EXISTS staging.stg_runs__events (
    _file           VARCHAR NOT NULL,
    _row            BIGINT NOT NULL,      -- line number in the file
    run_id          VARCHAR NOT NULL,
    event           VARCHAR NOT NULL,     -- run_config | step | checkpoint_started | checkpoint_saved | checkpoint_loaded | eval_started | eval_done
    ts              TIMESTAMP NOT NULL,   -- UTC
    job_id          VARCHAR,
    step            BIGINT,
    tokens          BIGINT,               -- step events: tokens since the previous step event
    project         VARCHAR,              -- run_config
    dtype           VARCHAR,
    model_params    DOUBLE,
    model_active_params DOUBLE,
    model_layers    INTEGER,
    model_heads     INTEGER,
    model_head_dim  INTEGER,
    model_seq_len   INTEGER,
    data_seconds    DOUBLE,               -- step events, optional: seconds of the step waiting for data
    comm_seconds    DOUBLE,               -- and in exposed communication (the trainer's timers)
    step_seconds    DOUBLE,               -- step events: seconds since the job's previous step event in the file
    reported_mfu    DOUBLE,               -- step events of a trainer log that prints them: its own MFU (0-1)
    reported_tflops DOUBLE,               -- and its TFLOP/s per GPU
    log_format      VARCHAR               -- the format a trainer log was read as (NULL: trainer events JSONL)
);
-- a warehouse staged before the step timers were read gains their columns (NULL: no timers there)
ALTER TABLE staging.stg_runs__events ADD COLUMN IF NOT EXISTS data_seconds DOUBLE;
ALTER TABLE staging.stg_runs__events ADD COLUMN IF NOT EXISTS comm_seconds DOUBLE;
ALTER TABLE staging.stg_runs__events ADD COLUMN IF NOT EXISTS step_seconds DOUBLE;
ALTER TABLE staging.stg_runs__events ADD COLUMN IF NOT EXISTS reported_mfu DOUBLE;
ALTER TABLE staging.stg_runs__events ADD COLUMN IF NOT EXISTS reported_tflops DOUBLE;
ALTER TABLE staging.stg_runs__events ADD COLUMN IF NOT EXISTS log_format VARCHAR;
