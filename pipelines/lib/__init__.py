"""What everything else is built on, by what it is: `config/` (the organisation config and its sections),
`warehouse/` (the DuckDB file, its SQL, the writer's lock, the published copy, the query sandbox, the
reference catalogs), `dagster_glue/` (resources, partitions, the expectation checks), and the small
helpers beside them (names, dates, CSV cells, atomic files, redaction, the ledger's days, alert money).
Nothing here imports what is built on it (tests/unit/test_imports.py)."""
