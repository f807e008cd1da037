-- What alerts ran, or would have run in a dry run (docs/plans.md#actions): once per alert. The row is
-- written before the command starts, so a crash mid-command never runs it a second time.
CREATE TABLE IF NOT EXISTS ops.actions (
    action_id   VARCHAR PRIMARY KEY,   -- sha256 of the alert id and kind, first 16 hex
    alert_id    VARCHAR NOT NULL UNIQUE,
    kind        VARCHAR NOT NULL,      -- the alert's kind, whose alerts.actions entry this is
    command     VARCHAR NOT NULL,      -- JSON list: the arguments, placeholders filled
    dry_run     BOOLEAN NOT NULL,
    started_at  TIMESTAMP NOT NULL,    -- UTC
    exit_code   INTEGER,               -- NULL: a dry run, not run (see output), or still running
    output      VARCHAR                -- stdout and stderr, the first 4000 characters; or why it did not run
);
