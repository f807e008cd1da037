-- Trainer events (runs/**/*.jsonl), one row per event line.
CREATE TABLE IF NOT EXISTS staging.stg_runs__events (
    _file           VARCHAR NOT NULL,
    _row            BIGINT NOT NULL,      -- line number in the file
    run_id          VARCHAR NOT NULL,
    event           VARCHAR NOT NULL,     -- run_config | step | checkpoint_saved | checkpoint_loaded
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
    model_seq_len   INTEGER
);
