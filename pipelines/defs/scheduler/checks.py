from pipelines.defs.scheduler.assets import stg_scheduler__job_allocations
from pipelines.ingest.sources import KUBERNETES, SLURM
from pipelines.ingest.staging_asset import contract_check

scheduler_contract = contract_check(stg_scheduler__job_allocations, SLURM, KUBERNETES)
