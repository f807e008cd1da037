-- Every landing file read so far, by source and path relative to the landing root.
-- A file whose size and content hash are unchanged is never read again; a re-delivered file with new
-- content replaces every staging and quarantine row that came from it.
CREATE TABLE IF NOT EXISTS ops.landed_files (
    source       VARCHAR NOT NULL,
    file         VARCHAR NOT NULL,
    size_bytes   BIGINT NOT NULL,
    sha256       VARCHAR NOT NULL,
    rows_staged  BIGINT NOT NULL,    -- input rows accepted (DCGM: samples, before the per-minute rollup)
    rows_quarantined BIGINT NOT NULL,
    first_day    DATE,
    last_day     DATE,
    loaded_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (source, file)
);
