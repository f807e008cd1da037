from pipelines.defs.collect.assets import COLLECT_DCGM
from pipelines.ingest.sources import DCGM, NVIDIA_SMI
from pipelines.ingest.staging_asset import staging_asset

stg_dcgm__gpu_minutes = staging_asset(
    DCGM,
    NVIDIA_SMI,
    description="""GPU telemetry: DCGM exporter samples from `telemetry/dcgm/` (long or wide, Parquet or CSV; Prometheus
scrapes) and nvidia-smi logs from `telemetry/nvidia_smi/<host>/` (query-gpu CSV, dmon), validated per
sample and rolled up per GPU, job label and minute by one rollup. Raw samples stay in the landing
files; a daily run reads only its own `day=` folder.""",
    # when the config names a Prometheus server the daily job collects the day first (docs/collect.md)
    deps=(COLLECT_DCGM,),
)
