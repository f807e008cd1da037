"""The optional node inventory (inventory/nodes.csv) → staging.stg_inventory__nodes rows.
Columns and what is refused: docs/ingest/inventory.md."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from models.landing import InventoryNode
from pipelines.ingest.common import blank_to_null, cast_failures, split_by_contract, to_int, unread_casts
from pipelines.landing.parsed import Parsed, file_reject

SOURCE = "inventory"
COLUMNS = ["hostname", "cluster", "resource_id", "gpu_model", "gpu_count", "pool", "team"]
STAGED = ["_file", "_row", *COLUMNS]


def parse(path: Path, file: str) -> Parsed:
    try:
        raw = pl.read_csv(path, infer_schema=False)
    except Exception as err:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable file: {err}"))
    raw = raw.rename({c: "raw." + c.strip() for c in raw.columns})
    if "raw.hostname" not in raw.columns:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, "missing column hostname"))
    col = lambda c: blank_to_null("raw." + c) if "raw." + c in raw.columns else pl.lit(None, dtype=pl.String)  # noqa: E731
    df = raw.with_row_index("_row", offset=1).with_columns(
        pl.lit(file).alias("_file"),
        *[col(c).alias(c) for c in COLUMNS if c != "gpu_count"],
        (to_int("raw.gpu_count", pl.Int32) if "raw.gpu_count" in raw.columns else pl.lit(None, dtype=pl.Int32)).alias("gpu_count"),
    )
    casts = {"gpu_count": ("raw.gpu_count", "an integer")}
    df = df.with_columns(cast_failures(df, casts).alias("_errors"))
    staged, rejects = split_by_contract(
        df,
        InventoryNode,
        source=SOURCE,
        file=file,
        staged_columns=STAGED,
        raw_columns=[c for c in raw.columns],
        row_ref=pl.format("row {}", pl.col("_row")),
        unread=unread_casts(df, casts),
    )
    return Parsed(rows=staged, rejects=rejects)
