-- Each alert's delivery to each channel it routes to (docs/plans.md#delivery): one row per alert and
-- channel, so nothing is sent twice to one channel. A pass claims a due row (attempts + 1, the next
-- attempt put off by the backoff) before it sends, and marks it delivered after; ops.alerts.status
-- sums these rows up. An escalated alert (a higher revision) makes its row due again.
CREATE TABLE IF NOT EXISTS ops.alert_deliveries (
    alert_id          VARCHAR NOT NULL,
    channel           VARCHAR NOT NULL,     -- the name of an alerts.channels entry
    status            VARCHAR NOT NULL,     -- pending | delivered | failed | cancelled
    attempts          INTEGER NOT NULL DEFAULT 0,
    first_attempt_at  TIMESTAMP,            -- UTC, as every time here
    last_attempt_at   TIMESTAMP,
    next_attempt_at   TIMESTAMP,            -- when a pending delivery is due (again)
    last_error        VARCHAR,              -- redacted: never a URL's secret or a password
    last_outcome      VARCHAR,              -- delivered | failed | unknown (sent whole, no answer in time)
    delivered_at      TIMESTAMP,
    revision          INTEGER DEFAULT 0,    -- the alert's revision this row delivers
    digest_key        VARCHAR,              -- the digest it went in (its idempotency key); NULL: sent alone
    PRIMARY KEY (alert_id, channel)
);
-- a warehouse made before last_outcome, revisions and digests gains them
ALTER TABLE ops.alert_deliveries ADD COLUMN IF NOT EXISTS last_outcome VARCHAR;
ALTER TABLE ops.alert_deliveries ADD COLUMN IF NOT EXISTS revision INTEGER DEFAULT 0;
ALTER TABLE ops.alert_deliveries ADD COLUMN IF NOT EXISTS digest_key VARCHAR;
