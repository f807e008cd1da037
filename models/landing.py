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
        "charge_period_start": Column(TS),
        "charge_period_end": Column(TS),
        "charge_category": Column(pl.String, isin=tuple(CHARGE_CATEGORIES)),
        "billed_cost": Column(MONEY),
        "effective_cost": Column(MONEY),
        # null only beside a null amount, which the amount's own check reports
        "billed_cost_rounding": Column(ROUNDING, nullable=True),
        "effective_cost_rounding": Column(ROUNDING, nullable=True),
        "commitment_discount_status": Column(pl.String, nullable=True, isin=tuple(COMMITMENT_STATUSES)),
        "resource_id": Column(pl.String, nullable=True),
        "tags": Column(pl.String, nullable=True),
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
)


SchedulerJobAllocation = Contract(
    "SchedulerJobAllocation",
    "A scheduler's record of a job allocation: a `sacct -P` allocation or step, or a Kubernetes pod.",
    {
        "cluster": Column(pl.String, min_length=1),
        "job_key": Column(pl.String, min_length=1),
        "job_id": Column(pl.String, min_length=1),
        "is_step": Column(pl.Boolean),
        "state": Column(pl.String, min_length=1),
        "start_ts": Column(TS, nullable=True),
        "end_ts": Column(TS, nullable=True),
        "gpus": Column(pl.Int32, nullable=True, ge=0),
        "node_count": Column(pl.Int32, nullable=True, ge=0),
    },
    (
        RowCheck("Submit, Start and End must not be in the future",
                 lambda: _not_in_future("submit_ts", "start_ts", "end_ts"), ("submit_ts", "start_ts", "end_ts")),
        RowCheck("End must not be before Start",
                 lambda: pl.col("end_ts").is_null() | pl.col("start_ts").is_null()
                 | (pl.col("end_ts") >= pl.col("start_ts")), ("start_ts", "end_ts")),
    ),
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
        "run_id": Column(pl.String, min_length=1),
        "event": Column(pl.String, isin=tuple(RUN_EVENTS)),
        "ts": Column(TS),
        "step": Column(pl.Int64, nullable=True, ge=0),
        "tokens": Column(pl.Int64, nullable=True, ge=0),
        "data_seconds": Column(pl.Float64, nullable=True, ge=0),
        "comm_seconds": Column(pl.Float64, nullable=True, ge=0),
        "step_seconds": Column(pl.Float64, nullable=True, ge=0),  # the parser's, from the file's step times
        # a trainer log's own figures (pipelines/ingest/trainer_logs/): MFU as a fraction, TFLOP/s per GPU
        "reported_mfu": Column(pl.Float64, nullable=True, ge=0),
        "reported_tflops": Column(pl.Float64, nullable=True, ge=0),
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
)

InventoryNode = Contract(
    "InventoryNode",
    "A row of inventory/nodes.csv.",
    {
        "hostname": Column(pl.String, min_length=1),
        "gpu_count": Column(pl.Int32, nullable=True, ge=0, le=64),
    },
)

RunPlan = Contract(
    "RunPlan",
    "A run plan from plans/*.yaml (the YAML schema itself is pipelines/ingest/plans.py's).",
    {
        "run_id": Column(pl.String, min_length=1),
        "project": Column(pl.String, min_length=1),
        "tokens": Column(pl.Float64, gt=0),
        "gpus": Column(pl.Int32, gt=0),
        "gpu_model": Column(pl.String, min_length=1),
        "redundancy": Column(pl.Float64, nullable=True, ge=1),
        "mfu_target": Column(pl.Float64, nullable=True, gt=0, le=1),
        "price_per_gpu_hour": Column(MONEY, nullable=True, gt=0),
        "peak_flops": Column(pl.Float64, nullable=True, gt=0),
    },
)
