from pipelines.ingest.sources import KUBERNETES, SLURM
from pipelines.ingest.staging_asset import staging_asset

stg_scheduler__job_allocations = staging_asset(
    SLURM,
    KUBERNETES,
    description="""Job allocations: Slurm accounting records from `scheduler/slurm/<cluster>/` (sacct -P),
allocations and steps, and Kubernetes GPU pods from `scheduler/kubernetes/<cluster>/` (kubectl pod
JSON lines, one allocation per pod, job id `namespace/pod`),
with times converted from the cluster's time zone to UTC, GPUs counted from AllocTRES and node
lists expanded. A job seen in several daily exports keeps one row per export.""",
)
