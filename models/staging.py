"""Every staging table's contract: the landing contracts that are their tables' rows (models/landing.py),
and those of staging tables whose rows are not the landing rows themselves (a DCGM minute).

The warehouse creates each staging table from its contract (`Contract.ddl`), so a staging column is
declared once, beside the checks of its values."""

from __future__ import annotations

import polars as pl

from models.contract import Column, Contract, RowCheck
from models.landing import (FILE_AND_ROW, TS, FocusBillLine, InventoryNode, RunEvent, RunPlan, SchedulerJobAllocation,
                            StorageObject)

DcgmGpuMinute = Contract(
    "DcgmGpuMinute",
    "A GPU's (or MIG instance's) telemetry for one minute under one job label.",
    {
        "_file": FILE_AND_ROW["_file"],  # a minute rolls up many rows: no one row of its file
        "day": Column(pl.Date),
        "minute_ts": Column(TS, doc="UTC, start of the minute"),
        "hostname": Column(pl.String, min_length=1),
        "gpu": Column(pl.Int32, ge=0, le=255),
        "gpu_instance": Column(pl.String, nullable=True, doc="MIG instance id, NULL for a whole GPU"),
        "uuid": Column(pl.String, nullable=True),
        "model_name": Column(pl.String, nullable=True),
        "hpc_job": Column(pl.String, nullable=True,
                          doc="job label of the series (hpc_job, or namespace/pod), NULL when none"),
        "samples": Column(pl.Int32, ge=1, doc="distinct sample timestamps in the minute"),
        "first_sample_ts": Column(TS),
        "last_sample_ts": Column(TS),
        "first_busy_ts": Column(TS, nullable=True,
                                doc="first sample of the minute with GPU_UTIL > 0: where an idle stretch ends"),
        "last_busy_ts": Column(TS, nullable=True, doc="and the last: where one starts inside a minute"),
        "gpu_util_min": Column(pl.Float64, nullable=True, ge=0, le=100, doc="DCGM_FI_DEV_GPU_UTIL, %"),
        "gpu_util_max": Column(pl.Float64, nullable=True, ge=0, le=100),
        "gpu_util_avg": Column(pl.Float64, nullable=True),
        "sm_active_max": Column(pl.Float64, nullable=True, ge=0, le=1, doc="DCGM_FI_PROF_SM_ACTIVE, 0–1"),
        "sm_active_avg": Column(pl.Float64, nullable=True),
        "tensor_active_avg": Column(pl.Float64, nullable=True, ge=0, le=1, doc="DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, 0–1"),
        "power_avg_w": Column(pl.Float64, nullable=True),
        "fb_used_max_mib": Column(pl.Float64, nullable=True),
        "energy_first_mj": Column(pl.Float64, nullable=True,
                                  doc="DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ, a counter) at the minute's first"),
        "energy_last_mj": Column(pl.Float64, nullable=True, doc="and last scrape that has it"),
    },
    (
        RowCheck("samples must lie inside their minute",
                 lambda: (pl.col("first_sample_ts") >= pl.col("minute_ts"))
                 & (pl.col("last_sample_ts") < pl.col("minute_ts") + pl.duration(minutes=1))
                 & (pl.col("first_sample_ts") <= pl.col("last_sample_ts")),
                 ("minute_ts", "first_sample_ts", "last_sample_ts")),
    ),
    table="staging/stg_dcgm__gpu_minutes",
    table_doc="The raw samples stay where they landed (Parquet, read in place); the warehouse keeps this rollup, "
              "which still knows the first and last sample of each minute so gaps between scrapes can be "
              "measured exactly.",
)

# The staging tables, in the order the warehouse creates them.
TABLES: tuple[Contract, ...] = (FocusBillLine, SchedulerJobAllocation, DcgmGpuMinute, RunEvent, InventoryNode, RunPlan,
                                StorageObject)
