"""The landing ledger: which landing files the warehouse took in, and the one way their rows get in.

`source` (what a source is, discovery, fingerprints), `parsed` (what a parser returns), `writer` (a
file's staging rows, rejects and ops.landed_files entry replaced together), `sync` (the protocol:
a source's own sync, or file by file), `batches` (set-based readers' batches), `deliveries` and
`bill_deliveries` (which bill files count), `restatements` (which bill days changed). It imports
nothing of ingest/ or above: the formats (pipelines/ingest/) build on it.
"""
