from pipelines.defs.runs.assets import stg_runs__events
from pipelines.ingest.sources import RUNS, TRAINER_LOGS
from pipelines.ingest.staging_asset import contract_check

runs_contract = contract_check(stg_runs__events, RUNS, TRAINER_LOGS)
