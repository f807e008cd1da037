"""Collectors as daily assets: the day's DCGM telemetry pulled from Prometheus into the landing zone
(pipelines/collect/prometheus.py, the same code as `gpuledger collect dcgm`; docs/collect.md).

The asset always exists (materialize it by hand, or backfill it, from the UI); the daily job runs it,
before the DCGM staging asset, only when the config names a server (`collect.prometheus.url`)."""

from datetime import date

import dagster as dg

from pipelines.collect.prometheus import (FOLDER, CollectError, client, collect_day, prometheus_collect_configured,
                                          settings_of)
from pipelines.lib.dagster_glue.partitions import DAILY
from pipelines.lib.dagster_glue.resources import LandingZone, landing_resource

COLLECT_DCGM = "collect/dcgm_prometheus"


def collecting_dcgm() -> bool:
    """Whether the daily job collects DCGM telemetry from Prometheus (read when the definitions load)."""
    return prometheus_collect_configured(landing_resource().org_config())


@dg.asset(
    key=COLLECT_DCGM.split("/"),
    partitions_def=DAILY,
    group_name="collect",
    kinds={"prometheus", "parquet"},
    description=f"The day's DCGM samples from Prometheus (`collect.prometheus.url`), one long Parquet file per "
                f"host under `{FOLDER}/day=<day>/`, each replaced atomically. Part of the daily job only when "
                "the config names the server.",
)
def dcgm_prometheus(context: dg.AssetExecutionContext, landing: LandingZone) -> dg.MaterializeResult:
    day = date.fromisoformat(context.partition_key)
    try:
        settings = settings_of(landing.org_config(), None)
        result = collect_day(landing.path, client(settings), day, settings)
    except CollectError as err:
        raise dg.Failure(description=str(err)) from None
    if result.files:
        context.log.info(f"{day}: {len(result.files)} file(s), {result.samples} samples from {settings.url}")
    else:
        context.log.warning(f"{day}: no samples of {', '.join(settings.metrics)} at {settings.url}; nothing written")
    return dg.MaterializeResult(metadata={
        "files": len(result.files), "hosts": result.hosts, "samples": result.samples, "requests": result.requests,
        "samples_without_host": result.no_host, "seconds": round(result.seconds, 3),
        "folder": dg.MetadataValue.path(str(landing.path / FOLDER / f"day={day.isoformat()}")),
    })
