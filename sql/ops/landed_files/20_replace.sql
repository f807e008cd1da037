-- ops.landed_files entries replaced whole by pipelines/landing/writer.py's `record`, in the transaction
-- that replaces the files' staging and quarantine rows: `landed_entries` has every column.
INSERT OR REPLACE INTO ops.landed_files BY NAME SELECT * FROM landed_entries
