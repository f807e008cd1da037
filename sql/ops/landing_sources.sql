-- Every landing source the ingest has read, as its declaration says (pipelines/ingest/sources.py):
-- SQL asks `is_bill` or `allocates` of a source here rather than naming sources. Written by each
-- source's sync (pipelines/landing/writer.py `declare`), so a new format is known once it is read.
CREATE TABLE IF NOT EXISTS ops.landing_sources (
    source         VARCHAR PRIMARY KEY,  -- as in ops.quarantine.source and ops.landed_files.source
    staging_table  VARCHAR NOT NULL,     -- e.g. staging.stg_focus__bill_lines
    folder         VARCHAR NOT NULL,     -- under the landing root, e.g. bills/focus
    is_bill        BOOLEAN NOT NULL,     -- deliveries of bill lines; quarantined rows keep their money
    allocates      BOOLEAN NOT NULL      -- scheduler records: they decide where money goes
);
