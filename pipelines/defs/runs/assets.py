from pipelines.ingest.sources import RUNS
from pipelines.ingest.staging_asset import staging_asset

stg_runs__events = staging_asset(
    RUNS,
    description="""Trainer events from `runs/**/*.jsonl`: run configs (model shape, dtype), steps with tokens,
checkpoint saves and loads. Broken lines go to ops.quarantine with their line number.""",
)
