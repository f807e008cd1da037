"""Every landing format gpuledger reads, in one place: the ingest assets and `inspect` share it."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from models import landing, staging
from pipelines.ingest import (aws_cur, dcgm, dcgm_batch, dcgm_prom, focus, inventory, kubernetes, plans, runs,
                              runs_batch, slurm)
from pipelines.ingest.plausible import guarded, guarded_chunks
from pipelines.ingest.refused_bills import charge_days
from pipelines.landing.bill_deliveries import sync_bills
from pipelines.landing.parsed import Parsed
from pipelines.landing.source import Source
from pipelines.lib.config import OrgConfig


def _dcgm(path: Path, rel: str, cfg: OrgConfig) -> Parsed:
    # Prometheus scrapes and exporter dumps (long or wide) are one source: the same samples
    return dcgm_prom.parse(path, rel) if path.name.lower().endswith(".prom") else dcgm.parse(path, rel)


def _kubernetes(path: Path, rel: str, cfg: OrgConfig) -> Parsed:
    cluster = rel.split("/")[2]  # scheduler/kubernetes/<cluster>/<file>
    return kubernetes.parse(path, rel, cluster, cfg)


def _slurm(path: Path, rel: str, cfg: OrgConfig) -> Parsed:
    cluster = rel.split("/")[2]  # scheduler/slurm/<cluster>/<file>
    return slurm.parse(path, rel, cluster, cfg.cluster(cluster), cfg.slurm.state_map)


FOCUS = Source(
    name="focus",
    table="staging/stg_focus__bill_lines",
    patterns=("bills/focus/**/*.csv", "bills/focus/**/*.csv.gz", "bills/focus/**/*.parquet"),
    parse=guarded("focus", lambda path, rel, cfg: focus.parse(path, rel, default_currency=cfg.default_currency)),
    summary_chunks=guarded_chunks(
        "focus", lambda path, rel, cfg: focus.parse_chunks(path, rel, default_currency=cfg.default_currency)),
    contract=landing.FocusBillLine,
    # a charge period's end is exclusive: a line ending at midnight does not touch the next day
    span=(pl.col("charge_period_start"), pl.col("charge_period_end") - pl.duration(microseconds=1)),
    group="bills",
    is_bill=True,
    sync=sync_bills,
    refused_days=charge_days(("ChargePeriodStart", "ChargePeriodEnd")),
)
AWS_CUR = Source(
    name="aws_cur",
    table="staging/stg_focus__bill_lines",  # converted to FOCUS on parse, staged beside native FOCUS
    patterns=("bills/aws_cur/**/*.csv", "bills/aws_cur/**/*.csv.gz", "bills/aws_cur/**/*.parquet"),
    parse=guarded("aws_cur", lambda path, rel, cfg: aws_cur.parse(path, rel, default_currency=cfg.default_currency)),
    summary_chunks=guarded_chunks("aws_cur", lambda path, rel, cfg: aws_cur.parse_chunks(path, rel, default_currency=cfg.default_currency,
                                                               descriptive=False)),
    contract=landing.FocusBillLine,
    span=FOCUS.span,
    group="bills",
    is_bill=True,
    sync=sync_bills,
    refused_days=charge_days(("lineItem/UsageStartDate", "lineItem/UsageEndDate"),
                             ("line_item_usage_start_date", "line_item_usage_end_date")),
)
SLURM = Source(
    name="slurm",
    table="staging/stg_scheduler__job_allocations",
    patterns=("scheduler/slurm/*/**/*.psv", "scheduler/slurm/*/**/*.txt"),
    parse=guarded("slurm", _slurm),
    contract=landing.SchedulerJobAllocation,
    span=(
        pl.coalesce("start_ts", "submit_ts"),
        pl.coalesce("end_ts", "start_ts", "submit_ts"),
    ),
    group="scheduler",
    allocates=True,
)
KUBERNETES = Source(
    name="kubernetes",
    table="staging/stg_scheduler__job_allocations",  # a pod is a job allocation like any other
    patterns=("scheduler/kubernetes/*/**/*.jsonl", "scheduler/kubernetes/*/**/*.json"),
    parse=guarded("kubernetes", _kubernetes),
    contract=landing.SchedulerJobAllocation,
    span=SLURM.span,
    group="scheduler",
    allocates=True,
)
DCGM = Source(
    name="dcgm",
    table="staging/stg_dcgm__gpu_minutes",
    patterns=("telemetry/dcgm/**/*.parquet", "telemetry/dcgm/**/*.csv", "telemetry/dcgm/**/*.prom"),
    parse=guarded("dcgm", _dcgm),
    contract=staging.DcgmGpuMinute,
    span=(pl.col("timestamp"), pl.col("timestamp")),
    group="telemetry",
    rollup="staging/stg_dcgm__gpu_minutes.rollup",
    # long typed Parquet (the volume) a batch of files at a time; the rest through `parse`, file by file
    batch=dcgm_batch.sync_batches,
)
RUNS = Source(
    name="runs",
    table="staging/stg_runs__events",
    patterns=("runs/**/*.jsonl",),
    parse=guarded("runs", lambda path, rel, cfg: runs.parse(path, rel)),
    contract=landing.RunEvent,
    span=(pl.col("ts"), pl.col("ts")),
    group="runs",
    batch=runs_batch.sync_batches,  # many files' lines in one column-wise read; empty and non-UTF-8 files one by one
)
INVENTORY = Source(
    name="inventory",
    table="staging/stg_inventory__nodes",
    patterns=("inventory/nodes.csv",),
    parse=guarded("inventory", lambda path, rel, cfg: inventory.parse(path, rel)),
    contract=landing.InventoryNode,
    span=(pl.lit(None, dtype=pl.Datetime("us")), pl.lit(None, dtype=pl.Datetime("us"))),
    group="inventory",
)

PLANS = Source(
    name="plans",
    table="staging/stg_plans__run_plans",
    patterns=("plans/*.yaml",),
    parse=guarded("plans", lambda path, rel, cfg: plans.parse(path, rel)),
    contract=landing.RunPlan,
    span=INVENTORY.span,  # a plan is not dated: every day sees it
    group="plans",
)

ALL = (FOCUS, AWS_CUR, SLURM, KUBERNETES, DCGM, RUNS, INVENTORY, PLANS)
BILLS = tuple(s for s in ALL if s.is_bill)
