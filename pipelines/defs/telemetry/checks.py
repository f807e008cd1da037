from pipelines.defs.telemetry.assets import stg_dcgm__gpu_minutes
from pipelines.ingest.sources import DCGM, NVIDIA_SMI
from pipelines.ingest.staging_asset import contract_check

dcgm_contract = contract_check(stg_dcgm__gpu_minutes, DCGM, NVIDIA_SMI)
