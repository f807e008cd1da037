"""`collect slurm` as a Dagster asset, on an hourly schedule (docs/collect.md#slurm): each cluster of
`collect.slurm.clusters` collected as `gpuledger collect slurm --cluster C` does, with the same code.

Not part of the daily ledger job (it runs sacct, the daily job reads the landing zone); its schedule
starts stopped, to be turned on where sacct can be reached."""

import dagster as dg

from pipelines.collect.slurm import CollectError, collect, summary
from pipelines.lib.dagster_glue.resources import LandingZone

GROUP = "collect"


@dg.asset(
    key=["landing", "slurm_sacct"],
    group_name=GROUP,
    kinds={"slurm"},
    description="""sacct → `scheduler/slurm/<cluster>/sacct-YYYY-MM-DD.psv` in the landing zone, one file per UTC
day, for each cluster of the config's `collect.slurm.clusters`, from the cluster's watermark less
`collect.slurm.lookback_hours`. A re-collect re-delivers whole days; the watermark moves only once
every file is in place.""",
)
def slurm_sacct(context: dg.AssetExecutionContext, landing: LandingZone) -> dg.MaterializeResult:
    cfg = landing.org_config().collect.slurm
    if not cfg.clusters:
        raise dg.Failure("no cluster to collect: list them in the config's collect.slurm.clusters")
    meta: dict[str, dg.MetadataValue] = {}
    failed = []
    for cluster in cfg.clusters:
        try:
            result = collect(landing.path, cluster, cfg)
        except CollectError as err:  # one cluster's failure does not stop the others
            context.log.error(f"{cluster}: {err}")
            failed.append(cluster)
            continue
        context.log.info("\n".join(summary(result)))
        meta[f"{cluster}_jobs"] = dg.MetadataValue.int(result.jobs)
        meta[f"{cluster}_files_written"] = dg.MetadataValue.int(sum(f.written for f in result.files))
        meta[f"{cluster}_watermark"] = dg.MetadataValue.text(f"{result.window_end:%Y-%m-%dT%H:%M:%SZ}")
    if failed:
        raise dg.Failure(f"collect slurm failed for {', '.join(failed)} (the others were collected)", metadata=meta)
    return dg.MaterializeResult(metadata=meta)


collect_slurm_job = dg.define_asset_job("collect_slurm", selection=dg.AssetSelection.assets(slurm_sacct))

collect_slurm_schedule = dg.ScheduleDefinition(
    job=collect_slurm_job, cron_schedule="10 * * * *", execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Hourly at :10, every cluster of collect.slurm.clusters; the daily ledger at 06:00 reads what it landed.",
)
