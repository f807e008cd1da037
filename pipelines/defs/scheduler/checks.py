from pipelines.defs.scheduler.assets import stg_slurm__job_records
from pipelines.ingest.sources import KUBERNETES, SLURM
from pipelines.ingest.staging_asset import contract_check

scheduler_contract = contract_check(stg_slurm__job_records, SLURM, KUBERNETES)
