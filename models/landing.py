"""Data contracts for every landing format, as pandera (polars) models.

Each model describes a landing row after it is parsed and cast to staging's names and types. The same
model splits good rows from bad ones on ingest (bad ones go to ops.quarantine with the failed check as
the reason) and backs the blocking asset check on the staging table.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import polars as pl
import pandera.polars as pa

MONEY = pl.Decimal(38, 18)
# what rounding an amount to MONEY's 1e-18 took off (at most 0.5e-18 either way), so that
# amount + rounding is exactly what the bill file says
ROUNDING = pl.Decimal(38, 38)
TS = pl.Datetime("us")

CHARGE_CATEGORIES = ["Usage", "Purchase", "Tax", "Credit", "Adjustment"]
COMMITMENT_STATUSES = ["Used", "Unused"]
RUN_EVENTS = ["run_config", "step", "checkpoint_saved", "checkpoint_loaded"]
# DCGM reports "not supported" as int64 sentinels from 0x7FFFFFFFFFFFFFF0 up; those are no reading.
DCGM_SENTINEL_MIN = 9.22e18


def _not_in_future(*columns: str) -> pl.Expr:
    """Times more than a day ahead of now are a clock or export error, not data (a day of slack for
    exporters in zones ahead of UTC and bills dated at the end of the current day)."""
    horizon = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(days=1)
    return pl.all_horizontal([pl.col(c).is_null() | (pl.col(c) <= horizon) for c in columns])


class _Contract(pa.DataFrameModel):
    class Config:
        strict = False  # parsers keep raw and bookkeeping columns beside the contract's
        coerce = False


class FocusBillLine(_Contract):
    """A FOCUS cost and usage row (FOCUS 1.0–1.2; AWS CUR rows after conversion)."""

    charge_period_start: TS = pa.Field(nullable=False)
    charge_period_end: TS = pa.Field(nullable=False)
    charge_category: str = pa.Field(isin=CHARGE_CATEGORIES)
    billed_cost: MONEY = pa.Field(nullable=False)
    effective_cost: MONEY = pa.Field(nullable=False)
    # null only beside a null amount, which the amount's own check reports
    billed_cost_rounding: ROUNDING = pa.Field(nullable=True)
    effective_cost_rounding: ROUNDING = pa.Field(nullable=True)
    commitment_discount_status: str = pa.Field(isin=COMMITMENT_STATUSES, nullable=True)
    resource_id: str = pa.Field(nullable=True)
    tags: str = pa.Field(nullable=True)

    @pa.dataframe_check(name="ChargePeriodEnd must not be before ChargePeriodStart")
    def period_ordered(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("charge_period_end") >= pl.col("charge_period_start"))

    @pa.dataframe_check(name="ChargePeriodStart must not be in the future")
    def not_future(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_not_in_future("charge_period_start"))

    @pa.dataframe_check(name="an amount's rounding must be within ±0.5e-18")
    def rounding_within_half_unit(cls, data: pa.PolarsData) -> pl.LazyFrame:
        half = pl.lit(Decimal("5e-19"), dtype=ROUNDING)
        return data.lazyframe.select(
            (pl.col("effective_cost_rounding").abs().fill_null(0) <= half)
            & (pl.col("billed_cost_rounding").abs().fill_null(0) <= half)
        )


class SchedulerJobAllocation(_Contract):
    """A scheduler's record of a job allocation: a `sacct -P` allocation or step, or a Kubernetes pod."""

    cluster: str = pa.Field(str_length={"min_value": 1})
    job_key: str = pa.Field(str_length={"min_value": 1})
    job_id: str = pa.Field(str_length={"min_value": 1})
    is_step: bool
    state: str = pa.Field(str_length={"min_value": 1})
    start_ts: TS = pa.Field(nullable=True)
    end_ts: TS = pa.Field(nullable=True)
    gpus: pl.Int32 = pa.Field(ge=0, nullable=True)
    node_count: pl.Int32 = pa.Field(ge=0, nullable=True)

    @pa.dataframe_check(name="Submit, Start and End must not be in the future")
    def not_future(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_not_in_future("submit_ts", "start_ts", "end_ts"))

    @pa.dataframe_check(name="End must not be before Start")
    def end_after_start(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(
            pl.col("end_ts").is_null() | pl.col("start_ts").is_null() | (pl.col("end_ts") >= pl.col("start_ts"))
        )


class DcgmSample(_Contract):
    """One DCGM exporter value: a metric of one GPU (or MIG instance) at one scrape time (long format)."""

    timestamp: TS = pa.Field(nullable=False)
    hostname: str = pa.Field(str_length={"min_value": 1})
    gpu: pl.Int32 = pa.Field(ge=0, le=255)
    metric: str = pa.Field(str_length={"min_value": 1})
    # is_finite rejects NaN and ±inf; the sentinel bound is applied on parse (dropped, not bad).
    value: pl.Float64 = pa.Field(ge=0, lt=DCGM_SENTINEL_MIN)

    @pa.dataframe_check(name="timestamp must not be in the future")
    def not_future(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_not_in_future("timestamp"))


class RunEvent(_Contract):
    """A trainer event from runs/**/*.jsonl."""

    run_id: str = pa.Field(str_length={"min_value": 1})
    event: str = pa.Field(isin=RUN_EVENTS)
    ts: TS = pa.Field(nullable=False)
    step: pl.Int64 = pa.Field(ge=0, nullable=True)
    tokens: pl.Int64 = pa.Field(ge=0, nullable=True)

    @pa.dataframe_check(name="ts must not be in the future")
    def not_future(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(_not_in_future("ts"))

    @pa.dataframe_check(name="step events must carry step and tokens")
    def steps_complete(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(
            (pl.col("event") != "step") | (pl.col("step").is_not_null() & pl.col("tokens").is_not_null())
        )


class InventoryNode(_Contract):
    """A row of inventory/nodes.csv."""

    hostname: str = pa.Field(str_length={"min_value": 1})
    gpu_count: pl.Int32 = pa.Field(ge=0, le=64, nullable=True)


class RunPlan(_Contract):
    """A run plan from plans/*.yaml (the YAML schema itself is pipelines/ingest/plans.py's)."""

    run_id: str = pa.Field(str_length={"min_value": 1})
    project: str = pa.Field(str_length={"min_value": 1})
    tokens: pl.Float64 = pa.Field(gt=0)
    gpus: pl.Int32 = pa.Field(gt=0)
    gpu_model: str = pa.Field(str_length={"min_value": 1})
    redundancy: pl.Float64 = pa.Field(ge=1, nullable=True)
    mfu_target: pl.Float64 = pa.Field(gt=0, le=1, nullable=True)
    price_per_gpu_hour: MONEY = pa.Field(gt=0, nullable=True)
