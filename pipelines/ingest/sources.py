"""Every landing format gpuledger reads, in one place: the ingest assets, `inspect` and the sensors share
it. A source is one entry: everything the pipeline needs to know of it is on its declaration."""

from __future__ import annotations

import importlib
import inspect
import os
from pathlib import Path

import duckdb
import polars as pl

from models import landing, staging
from pipelines.ingest import (aws_cur, dcgm, dcgm_batch, dcgm_prom, focus, inventory, kubernetes, nvidia_smi, plans,
                              runs, runs_batch, slurm, storage_inventory, summaries)
from pipelines.ingest.storage_sync import sync_storage
from pipelines.ingest.plausible import guard
from pipelines.ingest.refused_bills import charge_days
from pipelines.ingest.trainer_logs import read as trainer_logs
from pipelines.ingest.trainer_logs.run_yaml import RUN_YAML
from pipelines.landing.bill_deliveries import sync_bills
from pipelines.landing.formats import FORMATS_ENV, FormatsError
from pipelines.landing.parsed import Parsed
from pipelines.landing.source import Source
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import step


def _dcgm(con: duckdb.DuckDBPyConnection, path: Path, rel: str, cfg: OrgConfig) -> Parsed:
    # Prometheus scrapes and exporter dumps (long or wide) are one source: the same samples
    return dcgm_prom.parse(path, rel) if path.name.lower().endswith(".prom") else dcgm.parse(path, rel)


def _kubernetes(con: duckdb.DuckDBPyConnection, path: Path, rel: str, cfg: OrgConfig) -> Parsed:
    cluster = rel.split("/")[2]  # scheduler/kubernetes/<cluster>/<file>
    return kubernetes.parse(path, rel, cluster, cfg)


def _slurm(con: duckdb.DuckDBPyConnection, path: Path, rel: str, cfg: OrgConfig) -> Parsed:
    cluster = rel.split("/")[2]  # scheduler/slurm/<cluster>/<file>
    return slurm.parse(path, rel, cluster, cfg.cluster(cluster), cfg.slurm.state_map)


FOCUS = guard(Source(
    name="focus",
    table="staging/stg_focus__bill_lines",
    patterns=("bills/focus/**/*.csv", "bills/focus/**/*.csv.gz", "bills/focus/**/*.parquet"),
    parse=lambda con, path, rel, cfg: focus.parse(con, path, rel, default_currency=cfg.default_currency),
    summary_chunks=lambda con, path, rel, cfg: focus.parse_chunks(con, path, rel, default_currency=cfg.default_currency),
    contract=landing.FocusBillLine,
    # a charge period's end is exclusive: a line ending at midnight does not touch the next day
    span=(pl.col("charge_period_start"), pl.col("charge_period_end") - pl.duration(microseconds=1)),
    time_columns=(("charge_period_start", "ChargePeriodStart"), ("charge_period_end", "ChargePeriodEnd")),
    row_word="row",
    group="bills",
    is_bill=True,
    sync=sync_bills,
    refused_days=charge_days(("ChargePeriodStart", "ChargePeriodEnd")),
))
AWS_CUR = guard(Source(
    name="aws_cur",
    table="staging/stg_focus__bill_lines",  # converted to FOCUS on parse, staged beside native FOCUS
    patterns=("bills/aws_cur/**/*.csv", "bills/aws_cur/**/*.csv.gz", "bills/aws_cur/**/*.parquet"),
    parse=lambda con, path, rel, cfg: aws_cur.parse(con, path, rel, default_currency=cfg.default_currency),
    summary_chunks=lambda con, path, rel, cfg: aws_cur.parse_chunks(con, path, rel, default_currency=cfg.default_currency,
                                                                    descriptive=False),
    contract=landing.FocusBillLine,
    span=FOCUS.span,
    time_columns=FOCUS.time_columns,
    row_word="row",
    group="bills",
    is_bill=True,
    sync=sync_bills,
    refused_days=charge_days(("lineItem/UsageStartDate", "lineItem/UsageEndDate"),
                             ("line_item_usage_start_date", "line_item_usage_end_date")),
))
SLURM = guard(Source(
    name="slurm",
    table="staging/stg_scheduler__job_allocations",
    patterns=("scheduler/slurm/*/**/*.psv", "scheduler/slurm/*/**/*.txt"),
    parse=_slurm,
    contract=landing.SchedulerJobAllocation,
    span=(
        pl.coalesce("start_ts", "submit_ts"),
        pl.coalesce("end_ts", "start_ts", "submit_ts"),
    ),
    time_columns=(("start_ts", "Start"), ("submit_ts", "Submit"), ("end_ts", "End")),
    row_word="line",
    group="scheduler",
    allocates=True,
    summary=summaries.JOBS,
))
KUBERNETES = guard(Source(
    name="kubernetes",
    table="staging/stg_scheduler__job_allocations",  # a pod is a job allocation like any other
    patterns=("scheduler/kubernetes/*/**/*.jsonl", "scheduler/kubernetes/*/**/*.json"),
    parse=_kubernetes,
    contract=landing.SchedulerJobAllocation,
    span=SLURM.span,
    time_columns=(("start_ts", "startTime"), ("submit_ts", "creationTimestamp"), ("end_ts", "finishedAt")),
    row_word="line",
    group="scheduler",
    allocates=True,
    summary=summaries.JOBS,
))
DCGM = guard(Source(
    name="dcgm",
    table="staging/stg_dcgm__gpu_minutes",
    patterns=("telemetry/dcgm/**/*.parquet", "telemetry/dcgm/**/*.csv", "telemetry/dcgm/**/*.prom"),
    parse=_dcgm,
    contract=staging.DcgmGpuMinute,
    span=(pl.col("timestamp"), pl.col("timestamp")),
    time_columns=(("timestamp", "timestamp"),),  # a sample names itself: host, GPU and time
    group="telemetry",
    rollup=step(dcgm_batch.DCGM_TABLE, "rollup"),
    # long typed Parquet (the volume) a batch of files at a time; the rest through `parse`, file by file
    batch=dcgm_batch.sync_batches,
    summary=summaries.GPU_SAMPLES,
))
# GPUs without dcgm-exporter: nvidia-smi's query-gpu CSV and dmon logs give the same samples, staged
# beside DCGM's by the same rollup (docs/ingest/nvidia-smi.md)
NVIDIA_SMI = guard(Source(
    name="nvidia_smi",
    table=DCGM.table,
    patterns=tuple(f"telemetry/nvidia_smi/*/**/*.{ext}" for ext in ("csv", "log", "txt")),
    parse=lambda con, path, rel, cfg: nvidia_smi.parse(path, rel, cfg),
    contract=DCGM.contract,
    span=DCGM.span,
    time_columns=DCGM.time_columns,
    row_word="line",
    group=DCGM.group,
    rollup=DCGM.rollup,
    summary=summaries.GPU_SAMPLES,
    sidecar=nvidia_smi.SIDECAR,  # host: and timezone: of the files beside it
))
RUNS = guard(Source(
    name="runs",
    table="staging/stg_runs__events",
    patterns=("runs/**/*.jsonl",),
    parse=lambda con, path, rel, cfg: runs.parse(con, path, rel),
    contract=landing.RunEvent,
    span=(pl.col("ts"), pl.col("ts")),
    time_columns=(("ts", "ts"),),
    row_word="line",
    group="runs",
    batch=runs_batch.sync_batches,  # many files' lines in one column-wise read; empty and non-UTF-8 files one by one
    summary=summaries.RUN_EVENTS,
))
TRAINER_LOGS = guard(Source(
    name="trainer_logs",
    table="staging/stg_runs__events",  # a log's steps and checkpoints are the trainer events JSONL has
    patterns=tuple(f"runs/logs/*/**/{name}" for name in ("*.log", "*.txt", "*.out", "trainer_state.json", "metrics.csv")),
    parse=lambda con, path, rel, cfg: trainer_logs.parse(path, rel),
    contract=landing.RunEvent,
    span=RUNS.span,
    time_columns=RUNS.time_columns,
    row_word="line",
    group="runs",
    summary=summaries.RUN_EVENTS,
    sidecar=RUN_YAML,
))
INVENTORY = guard(Source(
    name="inventory",
    table="staging/stg_inventory__nodes",
    patterns=("inventory/nodes.csv",),
    parse=lambda con, path, rel, cfg: inventory.parse(path, rel),
    contract=landing.InventoryNode,
    span=(pl.lit(None, dtype=pl.Datetime("us")), pl.lit(None, dtype=pl.Datetime("us"))),
    group="inventory",
    summary=summaries.NODES,
))

PLANS = guard(Source(
    name="plans",
    table="staging/stg_plans__run_plans",
    patterns=("plans/*.yaml",),
    parse=lambda con, path, rel, cfg: plans.parse(path, rel),
    contract=landing.RunPlan,
    span=INVENTORY.span,  # a plan is not dated: every day sees it
    group="plans",
))

# Storage inventories (docs/ingest/storage.md): S3 Inventory deliveries (a manifest.json and the data
# files it names) and POSIX listings, a snapshot per store and day, staged set-wise by their own sync
STORAGE = guard(Source(
    name=storage_inventory.SOURCE,
    table="staging/stg_storage__objects",
    patterns=tuple(f"inventory/storage/**/{name}" for name in (
        "manifest.json", "*.csv", "*.csv.gz", "*.parquet", "*.orc", "manifest.checksum", "symlink.txt")),
    parse=storage_inventory.parse,
    contract=landing.StorageObject,
    span=(pl.col("snapshot_day").cast(pl.Datetime("us")), pl.col("snapshot_day").cast(pl.Datetime("us"))),
    row_word="row",
    group="storage",
    sync=sync_storage,
))

BUILT_IN = (FOCUS, AWS_CUR, SLURM, KUBERNETES, DCGM, NVIDIA_SMI, RUNS, TRAINER_LOGS, INVENTORY, PLANS, STORAGE)
# Formats a site adds without changing gpuledger: Python modules (importable, comma-separated), each
# declaring its `SOURCES` (Source entries, built with `guard` like the ones above). A bill format whose
# parser gives FOCUS bill lines lands in staging.stg_focus__bill_lines beside FOCUS and CUR.


def _added_formats() -> tuple[Source, ...]:
    added: list[Source] = []
    for name in filter(None, (n.strip() for n in os.environ.get(FORMATS_ENV, "").split(","))):
        try:
            module = importlib.import_module(name)
        except ImportError as err:
            raise FormatsError(f"{FORMATS_ENV} names module {name!r}, which cannot be imported: {err}") from err
        declared = getattr(module, "SOURCES", None)
        if not declared or not all(isinstance(s, Source) for s in declared):
            raise FormatsError(f"{FORMATS_ENV} module {name!r} declares no SOURCES (a tuple of "
                            f"pipelines.landing.source.Source)")
        for source in declared:
            _check_parsers(name, source)
        added.extend(declared)
    names = [s.name for s in BUILT_IN + tuple(added)]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise FormatsError(f"{FORMATS_ENV}: source name(s) {', '.join(twice)} declared twice")
    return tuple(added)


def _check_parsers(module: str, source: Source) -> None:
    """An added format's parsers take the caller's DuckDB connection first, (con, path, rel, cfg): a
    module written for the earlier (path, rel, cfg) would fail on its first file, deep in a sync."""
    for label, parse in (("parse", source.parse), ("summary_chunks", source.summary_chunks)):
        if parse is None:
            continue
        try:
            inspect.signature(parse).bind(None, None, None, None)
        except TypeError:
            raise FormatsError(
                f"{FORMATS_ENV} module {module!r}: source {source.name!r} has a {label}{inspect.signature(parse)}, "
                f"but a parser takes (con, path, rel, cfg), the caller's DuckDB connection first "
                f"(docs/landing.md#adding-a-bill-format)") from None
        except ValueError:  # a builtin or C function without a signature: trusted as declared
            continue


ALL = BUILT_IN + _added_formats()
BILLS = tuple(s for s in ALL if s.is_bill)
