-- Alerts the daily run raised (docs/plans.md#alerts), each once: `alert_id` is a digest of what it is
-- about (kind, subject and threshold), so raising it again changes nothing. Delivery fills `status`,
-- `delivered_at` and `channel`; until then an alert is `pending`.
CREATE TABLE IF NOT EXISTS ops.alerts (
    alert_id         VARCHAR PRIMARY KEY,   -- sha256 of kind, subject_type, subject and threshold, first 16 hex
    kind             VARCHAR NOT NULL,      -- budget_threshold | cost_anomaly | hung_job | step_time_regression
    severity         VARCHAR NOT NULL,      -- info | warning | critical
    subject_type     VARCHAR NOT NULL,      -- run | project_month | team | job …
    subject          VARCHAR NOT NULL,      -- the run id, project, team or job it is about
    threshold        VARCHAR NOT NULL,      -- '30%', 'burn_ahead', a day for an anomaly …
    team             VARCHAR,
    day              DATE NOT NULL,         -- the ledger day whose run raised it
    raised_at        TIMESTAMP NOT NULL,    -- UTC
    message          VARCHAR NOT NULL,
    cost_at_stake    DECIMAL(38, 18),       -- what the condition has cost so far
    billing_currency VARCHAR,
    status           VARCHAR NOT NULL DEFAULT 'pending',  -- pending | delivered | failed
    delivered_at     TIMESTAMP,
    channel          VARCHAR,
    details          VARCHAR                -- JSON: the figures behind the message
);
