from pipelines.defs.collect.assets import COLLECT_DCGM
from pipelines.ingest.sources import DCGM
from pipelines.ingest.staging_asset import staging_asset

stg_dcgm__gpu_minutes = staging_asset(
    DCGM,
    description="""DCGM exporter telemetry from `telemetry/dcgm/` (long or wide, Parquet or CSV), validated per
sample and rolled up per GPU, job label and minute. Raw samples stay in the landing Parquet; a
daily run reads only its own `day=` folder.""",
    # when the config names a Prometheus server the daily job collects the day first (docs/collect.md)
    deps=(COLLECT_DCGM,),
)
