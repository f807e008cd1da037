"""Trainer logs as frameworks write them (runs/logs/<folder>/), read into the trainer events of
staging.stg_runs__events beside the JSONL ones: one module per format, each turning a log's text into
`LogEvent`s (events.py); `read.py` places a log's format, applies its folder's run.yaml and stages the
events through the JSONL reader's own typing and contract. Formats and lines read:
docs/ingest/trainer-logs.md."""
