from pipelines.ingest.sources import RUNS, TRAINER_LOGS
from pipelines.ingest.staging_asset import staging_asset

stg_runs__events = staging_asset(
    RUNS, TRAINER_LOGS,
    description="""Trainer events from `runs/**/*.jsonl`: run configs (model shape, dtype), steps with tokens,
checkpoint saves and loads; and the same events read from trainer logs as frameworks write them under
`runs/logs/` (Megatron-LM, torchtitan, nanoGPT-style, Hugging Face trainer_state.json, Lightning
metrics.csv). Broken lines go to ops.quarantine with their line number.""",
)
