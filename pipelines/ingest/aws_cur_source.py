"""The AWS CUR landing source: `bills/aws_cur/` files, converted to FOCUS on parse, staged beside
native FOCUS bills in staging.stg_focus__bill_lines (`source` = 'aws_cur', rows keyed by `_file`)."""

from __future__ import annotations

import polars as pl

from models import landing
from pipelines.ingest import aws_cur
from pipelines.lib.landing import Source

AWS_CUR = Source(
    name="aws_cur",
    table="staging/stg_focus__bill_lines",
    patterns=("bills/aws_cur/**/*.csv", "bills/aws_cur/**/*.csv.gz", "bills/aws_cur/**/*.parquet"),
    parse=lambda path, rel, cfg: aws_cur.parse(path, rel),
    model=landing.FocusBillLine,
    staged_model=landing.FocusBillLine,
    # as FOCUS: a charge period's end is exclusive, so a line ending at midnight does not touch the next day
    span=(pl.col("charge_period_start"), pl.col("charge_period_end") - pl.duration(microseconds=1)),
)
