-- Rejected input: one row per landing row (or whole file) that could not be staged, with why.
-- Bill rows keep their money (when it parses) so the ledger can still account for it as `unattributed`.
CREATE TABLE IF NOT EXISTS ops.quarantine (
    source          VARCHAR NOT NULL,   -- focus | aws_cur | slurm | kubernetes | dcgm | runs | inventory
    file            VARCHAR NOT NULL,   -- path relative to the landing root
    row_ref         VARCHAR NOT NULL,   -- 'row 17' (1-based data row, header excluded), 'line 17', or 'file'
    reason          VARCHAR NOT NULL,
    payload         VARCHAR,            -- the raw row as JSON
    effective_cost  DECIMAL(38, 18),
    billed_cost     DECIMAL(38, 18),
    billing_currency VARCHAR,           -- the money's currency (ISO 4217)
    effective_cost_rounding DECIMAL(38, 38),  -- what rounding to 1e-18 took off (file's amount = sum)
    billed_cost_rounding    DECIMAL(38, 38),
    charge_period_start TIMESTAMP,      -- UTC, when it parses: the days the money belongs to
    charge_period_end   TIMESTAMP,
    day             DATE,               -- the UTC day the row belongs to, when known
    -- who wrote the row: 'landing' for the parsers, or the table whose step found it (e.g.
    -- 'intermediate/int_nodes'), which replaces its own rows of a day when the day runs again
    origin          VARCHAR DEFAULT 'landing'
);
-- warehouses made before the column existed
ALTER TABLE ops.quarantine ADD COLUMN IF NOT EXISTS billing_currency VARCHAR;
-- A warehouse built before amounts were kept with their rounding gains the columns (NULL: read as 0).
ALTER TABLE ops.quarantine ADD COLUMN IF NOT EXISTS effective_cost_rounding DECIMAL(38, 38);
ALTER TABLE ops.quarantine ADD COLUMN IF NOT EXISTS billed_cost_rounding DECIMAL(38, 38);
ALTER TABLE ops.quarantine ADD COLUMN IF NOT EXISTS origin VARCHAR DEFAULT 'landing';
