"""The `collect:` section of the organisation config: the collectors that fill the landing zone from a
cluster's own systems, Prometheus (DCGM telemetry) and sacct (docs/collect.md)."""

from __future__ import annotations

import re

from pydantic import Field, field_serializer, field_validator

from pipelines.lib.config.section import CLUSTER_NAME
from pipelines.lib.config.section import Section as _Section
from pipelines.lib.redact import redact_url

# The DCGM fields the ledger reads (docs/ingest/dcgm.md; sql/macros/50_dcgm_rollup.sql rolls them up): what
# `collect dcgm` pulls unless told otherwise.
DCGM_LEDGER_METRICS: list[str] = ["DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                                  "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_FB_USED",
                                  "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]
# landing column -> the Prometheus label that carries it, as dcgm-exporter names them
DEFAULT_PROMETHEUS_LABELS: dict[str, str] = {
    "hostname": "Hostname", "gpu": "gpu", "UUID": "UUID", "modelName": "modelName", "GPU_I_ID": "GPU_I_ID",
    "hpc_job": "hpc_job", "pod": "pod", "namespace": "namespace",
}
METRIC_NAME = re.compile(r"^[A-Za-z_:][A-Za-z0-9_:]*$")
LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PrometheusCollectConfig(_Section):
    """`gpuledger collect dcgm` and its Dagster asset (docs/collect.md)."""

    # the server's base URL; set, the daily job collects each day before ingesting it
    url: str | None = None
    # the time span of one request, per metric: raw samples of every series in it come back at once (at
    # most 11,000 per series at telemetry.scrape_interval_seconds, Prometheus' limit on a range query)
    chunk_minutes: int = Field(60, ge=1, le=1440)
    metrics: list[str] = Field(default_factory=lambda: list(DCGM_LEDGER_METRICS), min_length=1)
    # landing column -> label, for clusters that relabel (only the columns given change)
    labels: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_PROMETHEUS_LABELS))
    timeout_seconds: int = Field(120, ge=1, le=3600)
    # a file holding a bearer token sent as `Authorization: Bearer …` (read-only API access suffices)
    bearer_token_file: str | None = None

    @field_validator("url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value and not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"{value!r} is not an http(s) URL (e.g. http://prometheus:9090)")
        return value.rstrip("/") if value else value

    @field_serializer("url")
    def _shown(self, url: str | None) -> str | None:
        # `config check` prints the dump: a user:password@ or ?token= of the URL never (alert channels' too)
        return None if url is None else redact_url(url)

    @field_validator("metrics")
    @classmethod
    def _dcgm_names(cls, value: list[str]) -> list[str]:
        bad = [m for m in value if not (METRIC_NAME.match(m) and m.startswith("DCGM_FI_"))]
        if bad:
            raise ValueError(f"{bad} are not DCGM field metric names (DCGM_FI_…)")
        return list(dict.fromkeys(value))

    @field_validator("labels")
    @classmethod
    def _label_map(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(DEFAULT_PROMETHEUS_LABELS))
        if unknown:
            raise ValueError(f"unknown landing column(s) {unknown}: known are {sorted(DEFAULT_PROMETHEUS_LABELS)}")
        bad = sorted(v for v in value.values() if not LABEL_NAME.match(v))
        if bad:
            raise ValueError(f"{bad} are not Prometheus label names")
        return {**DEFAULT_PROMETHEUS_LABELS, **value}


class CollectSlurmConfig(_Section):
    # the sacct program, after any launcher words: ["sacct"], ["ssh", "login-node", "sacct"]
    sacct: tuple[str, ...] = Field(("sacct",), min_length=1)
    # each collect re-reads this much before the watermark, catching jobs that ended late or were requeued
    lookback_hours: int = Field(48, ge=0, le=24 * 90)
    # the clusters the Dagster asset collects (the command names its one with --cluster)
    clusters: tuple[str, ...] = ()
    timeout_seconds: int = Field(600, ge=1, description="how long one sacct call may take")

    @field_validator("clusters")
    @classmethod
    def _folder_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not CLUSTER_NAME.match(name):
                raise ValueError(f"{name!r} is not a cluster name (letters, digits, '_', '-', '.')")
        return value


class CollectConfig(_Section):
    """Collectors that fill the landing zone from a cluster's own systems (docs/collect.md)."""

    prometheus: PrometheusCollectConfig = PrometheusCollectConfig()
    slurm: CollectSlurmConfig = CollectSlurmConfig()
