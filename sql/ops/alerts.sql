-- Alerts (docs/plans.md#alerts) as episodes: one row per kind and subject, its `alert_id` a digest of
-- (kind, subject_type, subject). An evaluation (the daily run, a live tick) that finds the condition
-- holding opens the episode or updates it (severity, threshold, message, money: the latest state); one
-- that no longer finds it resolves it. Delivery fills `status`, `delivered_at` and `channel`; until then,
-- and again after an escalation, an alert is `pending`.
CREATE TABLE IF NOT EXISTS ops.alerts (
    alert_id         VARCHAR PRIMARY KEY,   -- sha256 of kind, subject_type and subject, first 16 hex
    kind             VARCHAR NOT NULL,      -- budget_threshold | cost_anomaly | hung_job | idle_session | step_time_regression
    severity         VARCHAR NOT NULL,      -- info | warning | critical
    subject_type     VARCHAR NOT NULL,      -- run | run_pace | project_month | team | job …
    subject          VARCHAR NOT NULL,      -- the run id, 'project YYYY-MM', 'team day currency', 'cluster/JobID'
    threshold        VARCHAR NOT NULL,      -- the latest state: '80%', 'burn_ahead', 'idle since …'
    team             VARCHAR,
    day              DATE NOT NULL,         -- the ledger day whose evaluation opened it
    raised_at        TIMESTAMP NOT NULL,    -- UTC, wall clock: when it was first written
    message          VARCHAR NOT NULL,
    cost_at_stake    DECIMAL(38, 18),       -- what the condition has cost so far
    billing_currency VARCHAR,
    status           VARCHAR NOT NULL DEFAULT 'pending',  -- pending | delivered | failed
    delivered_at     TIMESTAMP,
    channel          VARCHAR,
    details          VARCHAR,               -- JSON: the figures behind the message
    opened_at        TIMESTAMP,             -- when the condition first held (data time, UTC)
    updated_at       TIMESTAMP,             -- the latest evaluation (its as_of) at which it held
    resolved_at      TIMESTAMP,             -- NULL while open; when it stopped holding
    escalated_at     TIMESTAMP,             -- the latest evaluation that made it due for delivery again
    revision         INTEGER DEFAULT 0      -- escalations so far: a delivery is of one revision
);
-- a warehouse made before episodes gains their columns; its rows (one per alert and threshold) keep
-- working: opened when raised, and resolved by the first evaluation of their kind (updated_at NULL)
ALTER TABLE ops.alerts ADD COLUMN IF NOT EXISTS opened_at TIMESTAMP;
ALTER TABLE ops.alerts ADD COLUMN IF NOT EXISTS updated_at TIMESTAMP;
ALTER TABLE ops.alerts ADD COLUMN IF NOT EXISTS resolved_at TIMESTAMP;
ALTER TABLE ops.alerts ADD COLUMN IF NOT EXISTS escalated_at TIMESTAMP;
ALTER TABLE ops.alerts ADD COLUMN IF NOT EXISTS revision INTEGER DEFAULT 0;
UPDATE ops.alerts SET opened_at = raised_at WHERE opened_at IS NULL;
