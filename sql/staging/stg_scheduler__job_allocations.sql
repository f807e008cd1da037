-- Job allocations as the schedulers record them: Slurm accounting records (sacct -P, allocations and
-- their steps) and Kubernetes GPU pods (one allocation each), times converted to UTC. A job running
-- across an export boundary appears once per export file; the ledger keeps the latest.
CREATE TABLE IF NOT EXISTS staging.stg_scheduler__job_allocations (
    _file           VARCHAR NOT NULL,
    _row            BIGINT NOT NULL,
    cluster         VARCHAR NOT NULL,
    job_key         VARCHAR NOT NULL,   -- JobIDRaw when exported, else JobID: unique per job (and step)
    job_id          VARCHAR NOT NULL,   -- JobID as users see it: 812, 5001_3, 812.batch
    parent_job_key  VARCHAR,            -- for steps, the allocation's job_key
    is_step         BOOLEAN NOT NULL,
    array_job_id    VARCHAR,
    array_task_id   VARCHAR,
    job_name        VARCHAR,
    user_name       VARCHAR,
    account         VARCHAR,
    partition       VARCHAR,
    qos             VARCHAR,
    state           VARCHAR NOT NULL,   -- COMPLETED, FAILED, CANCELLED, … ('CANCELLED by 123' → CANCELLED)
    cancelled_by    VARCHAR,
    exit_code       VARCHAR,
    submit_ts       TIMESTAMP,
    start_ts        TIMESTAMP,          -- NULL: never started (pending, cancelled before start)
    end_ts          TIMESTAMP,          -- NULL: still running at export time
    alloc_tres      VARCHAR,
    gpus            INTEGER,            -- whole GPUs of the allocation (all nodes); NULL when AllocTRES has none
    node_count      INTEGER,
    node_list       VARCHAR,
    hosts           VARCHAR[],          -- node_list expanded
    comment         VARCHAR,
    run_id          VARCHAR,            -- from `run_id=<id>` in the comment
    restarts        INTEGER
);
-- Shares of GPUs held besides whole ones (MIG instances, stated fractions), each in units of 1/7000 of a
-- GPU (models/mig_profiles.py), NULL when none; and the physical GPU such a slice is on when the record
-- says (Run:ai's `runai-gpu`). A warehouse staged before them gains them, NULL on the rows staged then.
ALTER TABLE staging.stg_scheduler__job_allocations ADD COLUMN IF NOT EXISTS gpu_slices INTEGER[];
ALTER TABLE staging.stg_scheduler__job_allocations ADD COLUMN IF NOT EXISTS gpu_index INTEGER;
-- A pod's labels as `key=value` texts (Kubernetes only; NULL for Slurm records and rows staged before):
-- what the config's policies.interactive.pod_labels tells an interactive session by.
ALTER TABLE staging.stg_scheduler__job_allocations ADD COLUMN IF NOT EXISTS labels VARCHAR[];
