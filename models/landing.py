"""Data contracts for every landing format (models/contract.py says what a contract is).

Each contract describes a landing row after it is parsed and cast to staging's names and types. The
same contract splits good rows from bad ones on ingest (bad ones go to ops.quarantine with the failed
check as the reason) and backs the blocking asset check on the staging table (as a pandera schema).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import polars as pl

from models.contract import Column, Contract, RowCheck

MONEY = pl.Decimal(38, 18)
# The books' one money limit, for bill lines and config amounts alike: an amount is below
# 10**MAX_AMOUNT_DIGITS in magnitude, so that any sum of up to MAX_SUMMED_LINES of them still fits MONEY
# (DuckDB's and Spark's SUM of a DECIMAL(38,18) stays DECIMAL(38,18); docs/landing.md#amounts-and-currencies).
MAX_AMOUNT_DIGITS = 12
MAX_SUMMED_LINES = 10**8
assert 10**MAX_AMOUNT_DIGITS * MAX_SUMMED_LINES <= 10 ** (38 - 18)
# what rounding an amount to MONEY's 1e-18 took off (at most 0.5e-18 either way), so that
# amount + rounding is exactly what the bill file says
ROUNDING = pl.Decimal(38, 38)
TS = pl.Datetime("us")


def decimal_lit(text: str, dtype: pl.Decimal) -> pl.Expr:
    """A DECIMAL literal from its text (a `Decimal` literal makes polars import numpy: 0.14 s of a parse)."""
    return pl.lit(text).cast(dtype)

CHARGE_CATEGORIES = ["Usage", "Purchase", "Tax", "Credit", "Adjustment"]
COMMITMENT_STATUSES = ["Used", "Unused"]
RUN_EVENTS = ["run_config", "step", "checkpoint_saved", "checkpoint_loaded", "checkpoint_started", "eval_started",
              "eval_done"]
# DCGM reports "not supported" as int64 sentinels from 0x7FFFFFFFFFFFFFF0 up; those are no reading.
DCGM_SENTINEL_MIN = 9.22e18


# Where a staged row came from: its file under the landing root and its row (a CSV record, a JSONL line);
# set by the pipeline, never judged (models/contract.Column.provenance).
FILE_AND_ROW = {"_file": Column(pl.String, provenance=True, doc="its file, relative to the landing root"),
                "_row": Column(pl.Int64, provenance=True, doc="its row or line in the file")}


def _not_in_future(*columns: str) -> pl.Expr:
    """Times more than a day ahead of now are a clock or export error, not data (a day of slack for
    exporters in zones ahead of UTC and bills dated at the end of the current day)."""
    horizon = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(days=1)
    return pl.all_horizontal([pl.col(c).is_null() | (pl.col(c) <= horizon) for c in columns])


def _not_in_future_sql(column: str) -> str:
    """`_not_in_future` in DuckDB SQL (its clock read when the query runs)."""
    return f"{column} IS NULL OR {column} <= timezone('UTC', now()) + INTERVAL 1 DAY"


def _finite_or_null(column: str) -> pl.Expr:
    return pl.col(column).is_null() | pl.col(column).is_finite()


def _timers_within_step() -> pl.Expr:
    """A step's data wait and exposed communication are parts of the step: together at most its
    seconds (where those are known; a millisecond of slack for timers that round). A timer that is no
    finite number is refused by its own check, not also by this one."""
    finite = [pl.when(pl.col(c).is_finite()).then(pl.col(c)).otherwise(0.0) for c in ("data_seconds", "comm_seconds")]
    return pl.col("step_seconds").is_null() | (finite[0] + finite[1] <= pl.col("step_seconds") + 1e-3)


def _rounding_within_half_unit() -> pl.Expr:
    half = decimal_lit("5e-19", ROUNDING)
    return (pl.col("effective_cost_rounding").abs().fill_null(0) <= half) & (
        pl.col("billed_cost_rounding").abs().fill_null(0) <= half
    )


FocusBillLine = Contract(
    "FocusBillLine",
    "A FOCUS cost and usage row (FOCUS 1.0–1.2; AWS CUR rows after conversion).",
    {
        **FILE_AND_ROW,
        "source": Column(pl.String, provenance=True, doc="focus | aws_cur"),
        "line_id": Column(pl.String, nullable=True, doc="x_LineItemId / identity/LineItemId when the export has one"),
        "billing_account_id": Column(pl.String, nullable=True),
        "billing_account_name": Column(pl.String, nullable=True),
        "billing_currency": Column(pl.String, nullable=True),
        "billing_period_start": Column(TS, nullable=True),
        "billing_period_end": Column(TS, nullable=True),
        "charge_period_start": Column(TS),
        "charge_period_end": Column(TS),
        "charge_category": Column(pl.String, isin=tuple(CHARGE_CATEGORIES), doc=" | ".join(CHARGE_CATEGORIES)),
        "charge_class": Column(pl.String, nullable=True, doc="Correction or NULL"),
        "charge_frequency": Column(pl.String, nullable=True),
        "charge_description": Column(pl.String, nullable=True),
        "pricing_category": Column(pl.String, nullable=True),
        "pricing_quantity": Column(pl.Float64, nullable=True),
        "pricing_unit": Column(pl.String, nullable=True),
        "pricing_currency": Column(pl.String, nullable=True),
        "consumed_quantity": Column(pl.Float64, nullable=True),
        "consumed_unit": Column(pl.String, nullable=True),
        "list_cost": Column(MONEY, nullable=True),
        "contracted_cost": Column(MONEY, nullable=True),
        "billed_cost": Column(MONEY),
        "effective_cost": Column(MONEY),
        # null only beside a null amount, which the amount's own check reports; 0 on the lines of a
        # warehouse made before amounts kept their rounding (anything finer than 1e-18 was refused then)
        "billed_cost_rounding": Column(ROUNDING, nullable=True, default=0, doc="what rounding to 1e-18 took off"),
        "effective_cost_rounding": Column(ROUNDING, nullable=True, default=0),
        "commitment_discount_id": Column(pl.String, nullable=True),
        "commitment_discount_type": Column(pl.String, nullable=True),
        "commitment_discount_category": Column(pl.String, nullable=True),
        "commitment_discount_status": Column(pl.String, nullable=True, isin=tuple(COMMITMENT_STATUSES),
                                             doc=" | ".join(COMMITMENT_STATUSES)),
        "provider_name": Column(pl.String, nullable=True, doc="ServiceProviderName (1.3), else ProviderName"),
        "host_provider_name": Column(pl.String, nullable=True, doc="HostProviderName (1.3)"),
        "publisher_name": Column(pl.String, nullable=True),
        "invoice_issuer_name": Column(pl.String, nullable=True),
        "invoice_id": Column(pl.String, nullable=True),
        "region_id": Column(pl.String, nullable=True),
        "resource_id": Column(pl.String, nullable=True),
        "resource_name": Column(pl.String, nullable=True),
        "resource_type": Column(pl.String, nullable=True),
        "service_category": Column(pl.String, nullable=True),
        "service_name": Column(pl.String, nullable=True),
        "service_subcategory": Column(pl.String, nullable=True),
        "sku_id": Column(pl.String, nullable=True),
        "sub_account_id": Column(pl.String, nullable=True),
        "sub_account_name": Column(pl.String, nullable=True),
        "tags": Column(pl.String, nullable=True, doc="the FOCUS Tags JSON object, keys trimmed"),
    },
    (
        RowCheck("ChargePeriodEnd must not be before ChargePeriodStart",
                 lambda: pl.col("charge_period_end") >= pl.col("charge_period_start"),
                 ("charge_period_start", "charge_period_end")),
        RowCheck("ChargePeriodStart must not be in the future", lambda: _not_in_future("charge_period_start"),
                 ("charge_period_start",)),
        RowCheck("an amount's rounding must be within ±0.5e-18", _rounding_within_half_unit,
                 ("effective_cost_rounding", "billed_cost_rounding")),
    ),
    table="staging/stg_focus__bill_lines",
    table_doc="One row per landed bill line; AWS CUR arrives here converted to FOCUS. Timestamps are UTC; money "
              "is exact DECIMAL, stored at 1e-18 rounded half-even, and `*_rounding` is what that took off, so "
              "billed_cost + billed_cost_rounding is exactly the amount the file wrote (|rounding| <= 0.5e-18).",
)


SchedulerJobAllocation = Contract(
    "SchedulerJobAllocation",
    "A scheduler's record of a job allocation: a `sacct -P` allocation or step, or a Kubernetes pod.",
    {
        **FILE_AND_ROW,
        "cluster": Column(pl.String, min_length=1),
        "job_key": Column(pl.String, min_length=1, doc="JobIDRaw when exported, else JobID: unique per job (and step)"),
        "job_id": Column(pl.String, min_length=1, doc="JobID as users see it: 812, 5001_3, 812.batch"),
        "parent_job_key": Column(pl.String, nullable=True, doc="for steps, the allocation's job_key"),
        "is_step": Column(pl.Boolean),
        "array_job_id": Column(pl.String, nullable=True),
        "array_task_id": Column(pl.String, nullable=True),
        "job_name": Column(pl.String, nullable=True),
        "user_name": Column(pl.String, nullable=True),
        "account": Column(pl.String, nullable=True),
        "partition": Column(pl.String, nullable=True),
        "qos": Column(pl.String, nullable=True),
        "state": Column(pl.String, min_length=1, doc="COMPLETED, FAILED, CANCELLED, … ('CANCELLED by 123' → CANCELLED)"),
        "cancelled_by": Column(pl.String, nullable=True),
        "exit_code": Column(pl.String, nullable=True),
        "submit_ts": Column(TS, nullable=True),
        "start_ts": Column(TS, nullable=True, doc="NULL: never started (pending, cancelled before start)"),
        "end_ts": Column(TS, nullable=True, doc="NULL: still running at export time"),
        "alloc_tres": Column(pl.String, nullable=True),
        "gpus": Column(pl.Int32, nullable=True, ge=0,
                       doc="whole GPUs of the allocation (all nodes); NULL when AllocTRES has none"),
        "node_count": Column(pl.Int32, nullable=True, ge=0),
        "node_list": Column(pl.String, nullable=True),
        "hosts": Column(pl.List(pl.String), nullable=True, doc="node_list expanded"),
        "comment": Column(pl.String, nullable=True),
        "run_id": Column(pl.String, nullable=True, doc="from `run_id=<id>` in the comment"),
        "restarts": Column(pl.Int32, nullable=True),
        "gpu_slices": Column(pl.List(pl.Int32), nullable=True),
        "gpu_index": Column(pl.Int32, nullable=True),
        "labels": Column(pl.List(pl.String), nullable=True),
    },
    (
        RowCheck("Submit, Start and End must not be in the future",
                 lambda: _not_in_future("submit_ts", "start_ts", "end_ts"), ("submit_ts", "start_ts", "end_ts")),
        RowCheck("End must not be before Start",
                 lambda: pl.col("end_ts").is_null() | pl.col("start_ts").is_null()
                 | (pl.col("end_ts") >= pl.col("start_ts")), ("start_ts", "end_ts")),
    ),
    table="staging/stg_scheduler__job_allocations",
    table_doc="Slurm accounting records (allocations and their steps) and Kubernetes GPU pods (one allocation "
              "each), times converted to UTC. A job running across an export boundary appears once per export "
              "file; the ledger keeps the latest.",
)

DcgmSample = Contract(
    "DcgmSample",
    "One DCGM exporter value: a metric of one GPU (or MIG instance) at one scrape time (long format).",
    {
        "timestamp": Column(TS),
        "hostname": Column(pl.String, min_length=1),
        "gpu": Column(pl.Int32, ge=0, le=255),
        "metric": Column(pl.String, min_length=1),
        # NaN is refused as null; the sentinel bound is applied on parse (dropped, not bad)
        "value": Column(pl.Float64, ge=0, lt=DCGM_SENTINEL_MIN),
    },
    (RowCheck("timestamp must not be in the future", lambda: _not_in_future("timestamp"), ("timestamp",),
              sql=_not_in_future_sql("timestamp")),),
)

RunEvent = Contract(
    "RunEvent",
    "A trainer event from runs/**/*.jsonl, or read from a trainer log under runs/logs/.",
    {
        **FILE_AND_ROW,
        "run_id": Column(pl.String, min_length=1),
        "event": Column(pl.String, isin=tuple(RUN_EVENTS), doc=" | ".join(RUN_EVENTS)),
        "ts": Column(TS, doc="UTC"),
        "job_id": Column(pl.String, nullable=True),
        "step": Column(pl.Int64, nullable=True, ge=0),
        "tokens": Column(pl.Int64, nullable=True, ge=0, doc="step events: tokens since the previous step event"),
        "project": Column(pl.String, nullable=True, doc="run_config events: the run's project and model"),
        "dtype": Column(pl.String, nullable=True),
        "model_params": Column(pl.Float64, nullable=True),
        "model_active_params": Column(pl.Float64, nullable=True),
        "model_layers": Column(pl.Int32, nullable=True),
        "model_heads": Column(pl.Int32, nullable=True),
        "model_head_dim": Column(pl.Int32, nullable=True),
        "model_seq_len": Column(pl.Int32, nullable=True),
        "data_seconds": Column(pl.Float64, nullable=True, ge=0,
                               doc="step events, optional: seconds of the step waiting for data"),
        "comm_seconds": Column(pl.Float64, nullable=True, ge=0,
                               doc="and in exposed communication (the trainer's timers)"),
        # the parser's, from the file's step times
        "step_seconds": Column(pl.Float64, nullable=True, ge=0,
                               doc="step events: seconds since the job's previous step event in the file"),
        # a trainer log's own figures (pipelines/ingest/trainer_logs/): MFU as a fraction, TFLOP/s per GPU
        "reported_mfu": Column(pl.Float64, nullable=True, ge=0,
                               doc="step events of a trainer log that prints them: its own MFU (0-1)"),
        "reported_tflops": Column(pl.Float64, nullable=True, ge=0, doc="and its TFLOP/s per GPU"),
        "log_format": Column(pl.String, nullable=True,
                             doc="the format a trainer log was read as (NULL: trainer events JSONL)"),
        "path": Column(pl.String, nullable=True,
                       doc="checkpoint_saved events, optional: where it was written (s3://bucket/prefix/, a path)"),
    },
    (
        RowCheck("ts must not be in the future", lambda: _not_in_future("ts"), ("ts",)),
        # a NaN or infinity passes `ge=0` (polars orders NaN above every number): refused here by name
        RowCheck("data_seconds must be a finite number", lambda: _finite_or_null("data_seconds"), ("data_seconds",)),
        RowCheck("comm_seconds must be a finite number", lambda: _finite_or_null("comm_seconds"), ("comm_seconds",)),
        RowCheck("data_seconds + comm_seconds must not exceed the step's seconds since the job's previous step",
                 _timers_within_step, ("data_seconds", "comm_seconds", "step_seconds")),
        RowCheck("step events must carry step and tokens",
                 lambda: (pl.col("event") != "step") | (pl.col("step").is_not_null() & pl.col("tokens").is_not_null()),
                 ("event", "step", "tokens")),
    ),
    table="staging/stg_runs__events",
    table_doc="One row per event.",
)

InventoryNode = Contract(
    "InventoryNode",
    "A row of inventory/nodes.csv.",
    {
        **FILE_AND_ROW,
        "hostname": Column(pl.String, min_length=1),
        "cluster": Column(pl.String, nullable=True),
        "resource_id": Column(pl.String, nullable=True),
        "gpu_model": Column(pl.String, nullable=True),
        "gpu_count": Column(pl.Int32, nullable=True, ge=0, le=64),
        "pool": Column(pl.String, nullable=True),
        "team": Column(pl.String, nullable=True),
    },
    table="staging/stg_inventory__nodes",
    table_doc="The optional node inventory.",
)

RunPlan = Contract(
    "RunPlan",
    "A run plan from plans/*.yaml (the YAML schema itself is pipelines/ingest/plans.py's).",
    {
        **FILE_AND_ROW,
        "run_id": Column(pl.String, min_length=1),
        "project": Column(pl.String, min_length=1),
        "model_params": Column(pl.Float64, doc="parameters without embeddings"),
        "model_active_params": Column(pl.Float64, doc="those a token uses (mixture of experts); = params otherwise"),
        "model_layers": Column(pl.Int32),
        "model_heads": Column(pl.Int32),
        "model_head_dim": Column(pl.Int32),
        "model_seq_len": Column(pl.Int32),
        "tokens": Column(pl.Float64, gt=0),
        "gpus": Column(pl.Int32, gt=0),
        "gpu_model": Column(pl.String, min_length=1, doc="as written; matched to the catalog by gpu_model_canonical"),
        "dtype": Column(pl.String, nullable=True, doc="NULL: bf16"),
        "redundancy": Column(pl.Float64, nullable=True, ge=1, doc="NULL: 1.3"),
        "mfu_target": Column(pl.Float64, nullable=True, gt=0, le=1),
        "price_per_gpu_hour": Column(MONEY, nullable=True, gt=0),
        "currency": Column(pl.String, nullable=True, doc="of price_per_gpu_hour"),
        "checkpoint_seconds": Column(pl.Float64, nullable=True),
        "restart_seconds": Column(pl.Float64, nullable=True),
        "mtbf_gpu_hours": Column(pl.Float64, nullable=True),
        "start": Column(pl.Date, nullable=True),
        "peak_flops": Column(pl.Float64, nullable=True, gt=0, doc="per GPU, dense, in the dtype; NULL: the GPU catalog's"),
    },
    table="staging/stg_plans__run_plans",
    table_doc="One row per plan file (docs/ingest/plans.md). NULL inputs are filled from the warehouse or the "
              "config when the plan is estimated (sql/marts/dim_run_plans/).",
)


STORE_KINDS = ["s3", "posix"]

StorageObject = Contract(
    "StorageObject",
    "An object of a storage inventory snapshot: an S3 Inventory row or a line of a POSIX listing under "
    "inventory/storage/ (docs/ingest/storage.md).",
    {
        **FILE_AND_ROW,
        "source": Column(pl.String, provenance=True, doc="s3_inventory | posix"),
        # a snapshot is replaced whole: a later delivery for the same store and day takes this one's rows out
        "delivery": Column(pl.String, provenance=True,
                           doc="the manifest.json (S3 Inventory) or listing (POSIX) the row came with"),
        "snapshot_day": Column(pl.Date, doc="UTC day the snapshot lists: the manifest's creationTimestamp, the listing's name"),
        "store": Column(pl.String, min_length=1, doc="the S3 bucket (sourceBucket) or the file system's name"),
        "store_kind": Column(pl.String, isin=tuple(STORE_KINDS), doc=" | ".join(STORE_KINDS)),
        "key": Column(pl.String, min_length=1, doc="the object's key (URL-decoded) or the file's path"),
        "size_bytes": Column(pl.Int64, ge=0),
        "last_modified": Column(TS, nullable=True,
                                doc="UTC; NULL where the file's value did not parse (the row is also quarantined)"),
        "last_accessed": Column(TS, nullable=True, doc="POSIX atime where the listing has it"),
        "tier": Column(pl.String, min_length=1, doc="S3 StorageClass (STANDARD when the inventory lists none), or the listing's tier"),
    },
    table="staging/stg_storage__objects",
    table_doc="One row per object and snapshot day; the objects of a store's day are those of its one "
              "current delivery.",
)
