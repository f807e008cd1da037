-- Every landing file read so far, by source and path relative to the landing root.
-- A file whose size and content hash are unchanged is never read again; a re-delivered file with new
-- content replaces every staging and quarantine row that came from it; a file removed from landing
-- takes its rows and its entry here with it.
CREATE TABLE IF NOT EXISTS ops.landed_files (
    source       VARCHAR NOT NULL,
    file         VARCHAR NOT NULL,
    size_bytes   BIGINT NOT NULL,
    sha256       VARCHAR NOT NULL,
    rows_staged  BIGINT NOT NULL,    -- input rows accepted (DCGM: samples, before the per-minute rollup)
    rows_quarantined BIGINT NOT NULL,
    first_day    DATE,               -- the days its rows touch; an unreadable bill file's, from its name
    last_day     DATE,
    loaded_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (source, file)
);
-- Bill files are deliveries (pipelines/landing/deliveries.py): only `current` files have rows in
-- staging and quarantine. Added in place so a warehouse made before them keeps working.
-- current | superseded (a later delivery repeats it) | duplicate (a byte-identical copy) | unreadable
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS status VARCHAR DEFAULT 'current';
-- the file or manifest that supersedes it; for a duplicate, the file it is a copy of
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS superseded_by VARCHAR;
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS status_reason VARCHAR;
-- What the delivery rule knows of a bill file, kept so an unchanged file is not read again:
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS modified_at TIMESTAMP;        -- its modification time, UTC
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS readable BOOLEAN;
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS billing_scopes VARCHAR[];     -- '<BillingAccountId>|<billing period start>'
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS first_charge TIMESTAMP;       -- first and last ChargePeriodStart
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS last_charge TIMESTAMP;
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS line_sample UBIGINT[];       -- sql/staging/stg_focus__bill_lines/30_line_sample.sql
ALTER TABLE ops.landed_files ADD COLUMN IF NOT EXISTS day_digests VARCHAR;          -- JSON: day -> digest of its lines (sql/staging/stg_focus__bill_lines/20_day_digests.sql)
