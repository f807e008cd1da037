-- Run plans (plans/*.yaml), one row per plan file (docs/ingest/plans.md). NULL inputs are filled from
-- the warehouse or the config when the plan is estimated (sql/marts/dim_run_plans/).
CREATE TABLE IF NOT EXISTS staging.stg_plans__run_plans (
    _file               VARCHAR NOT NULL,
    _row                BIGINT NOT NULL,
    run_id              VARCHAR NOT NULL,
    project             VARCHAR NOT NULL,
    model_params        DOUBLE NOT NULL,      -- parameters without embeddings
    model_active_params DOUBLE NOT NULL,      -- those a token uses (mixture of experts); = params otherwise
    model_layers        INTEGER NOT NULL,
    model_heads         INTEGER NOT NULL,
    model_head_dim      INTEGER NOT NULL,
    model_seq_len       INTEGER NOT NULL,
    tokens              DOUBLE NOT NULL,
    gpu_model           VARCHAR NOT NULL,     -- as written; matched to the catalog by gpu_model_canonical
    gpus                INTEGER NOT NULL,
    dtype               VARCHAR,              -- NULL: bf16
    mfu_target          DOUBLE,
    redundancy          DOUBLE,               -- NULL: 1.3
    price_per_gpu_hour  DECIMAL(38, 18),
    currency            VARCHAR,              -- of price_per_gpu_hour
    checkpoint_seconds  DOUBLE,
    restart_seconds     DOUBLE,
    mtbf_gpu_hours      DOUBLE,
    start               DATE,
    peak_flops          DOUBLE                -- per GPU, dense, in the dtype; NULL: the GPU catalog's
);
-- a warehouse staged before plans could give peak_flops
ALTER TABLE staging.stg_plans__run_plans ADD COLUMN IF NOT EXISTS peak_flops DOUBLE;
