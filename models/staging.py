"""Contracts of staging tables whose rows are not the landing rows themselves."""

from __future__ import annotations

import polars as pl

from models.contract import Column, Contract, RowCheck
from models.landing import TS

DcgmGpuMinute = Contract(
    "DcgmGpuMinute",
    "A GPU's (or MIG instance's) telemetry for one minute under one job label.",
    {
        "day": Column(pl.Date),
        "minute_ts": Column(TS),
        "hostname": Column(pl.String, min_length=1),
        "gpu": Column(pl.Int32, ge=0, le=255),
        "samples": Column(pl.Int32, ge=1),
        "first_sample_ts": Column(TS),
        "last_sample_ts": Column(TS),
        "gpu_util_min": Column(pl.Float64, nullable=True, ge=0, le=100),
        "gpu_util_max": Column(pl.Float64, nullable=True, ge=0, le=100),
        "sm_active_max": Column(pl.Float64, nullable=True, ge=0, le=1),
        "tensor_active_avg": Column(pl.Float64, nullable=True, ge=0, le=1),
    },
    (
        RowCheck("samples must lie inside their minute",
                 lambda: (pl.col("first_sample_ts") >= pl.col("minute_ts"))
                 & (pl.col("last_sample_ts") < pl.col("minute_ts") + pl.duration(minutes=1))
                 & (pl.col("first_sample_ts") <= pl.col("last_sample_ts")),
                 ("minute_ts", "first_sample_ts", "last_sample_ts")),
    ),
)
