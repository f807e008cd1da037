-- How each day's last run of the daily job ended, so a day whose run failed or never finished is never
-- published as complete (finance.reconciliation_daily): its marts may hold part of the new run and part
-- of the old. `running` is written before the day's run starts (gpuledger run) and by every step that
-- rewrites one of the day's tables, `succeeded` by the publish step, `failed` with its reasons by
-- gpuledger run when the run fails.
CREATE TABLE IF NOT EXISTS ops.ledger_days (
    day         DATE PRIMARY KEY,
    status      VARCHAR NOT NULL,   -- running | succeeded | failed
    run_id      VARCHAR,
    reason      VARCHAR,            -- why it failed, the run's own words; NULL otherwise
    updated_at  TIMESTAMP NOT NULL
);
