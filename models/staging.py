"""Contracts of staging tables whose rows are not the landing rows themselves."""

from __future__ import annotations

import polars as pl
import pandera.polars as pa

from models.landing import TS


class DcgmGpuMinute(pa.DataFrameModel):
    """A GPU's (or MIG instance's) telemetry for one minute under one job label."""

    day: pl.Date
    minute_ts: TS
    hostname: str = pa.Field(str_length={"min_value": 1})
    gpu: pl.Int32 = pa.Field(ge=0, le=255)
    samples: pl.Int32 = pa.Field(ge=1)
    first_sample_ts: TS
    last_sample_ts: TS
    gpu_util_min: pl.Float64 = pa.Field(ge=0, le=100, nullable=True)
    gpu_util_max: pl.Float64 = pa.Field(ge=0, le=100, nullable=True)
    sm_active_max: pl.Float64 = pa.Field(ge=0, le=1, nullable=True)
    tensor_active_avg: pl.Float64 = pa.Field(ge=0, le=1, nullable=True)

    class Config:
        strict = False

    @pa.dataframe_check(name="samples must lie inside their minute")
    def samples_in_minute(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(
            (pl.col("first_sample_ts") >= pl.col("minute_ts"))
            & (pl.col("last_sample_ts") < pl.col("minute_ts") + pl.duration(minutes=1))
            & (pl.col("first_sample_ts") <= pl.col("last_sample_ts"))
        )
