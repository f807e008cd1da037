from pipelines.ingest.sources import SLURM
from pipelines.lib.ingest_asset import staging_asset

stg_slurm__job_records = staging_asset(
    SLURM,
    group="scheduler",
    description="""Slurm accounting records from `scheduler/slurm/<cluster>/` (sacct -P), allocations and steps,
with times converted from the cluster's time zone to UTC, GPUs counted from AllocTRES and node
lists expanded. A job seen in several daily exports keeps one row per export.""",
)
