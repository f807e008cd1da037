"""Bill records that held bytes that are not UTF-8: quarantined with their money, never lost.

`common.read_csv_leniently` reads such a record with U+FFFD in place of the bad bytes and says where
they were (`UNDECODABLE`). The record is parsed like any other, so its amounts, currency and charge
period are read as far as they can be; then it is quarantined (the bad bytes may have been in a tag or
a resource name, and what it would be allocated to can no longer be trusted), its reason naming the
column and byte, and its money kept, so the day counts it as `unattributed` and still reconciles.
"""

from __future__ import annotations

import polars as pl

from pipelines.ingest.chunks import Chunk
from pipelines.ingest.common import UNDECODABLE
from pipelines.landing.parsed import QUARANTINE_SCHEMA, Parsed

# the money and charge period a quarantine row keeps, as staging names them
_KEPT = ["effective_cost", "billed_cost", "billing_currency", "effective_cost_rounding", "billed_cost_rounding",
         "charge_period_start", "charge_period_end"]


def without_undecodable(frame: pl.DataFrame) -> pl.DataFrame:
    """The chunk's records as a parser reads them (the marker column is not input)."""
    return frame.drop(UNDECODABLE, strict=False)


def quarantine_undecodable(parsed: Parsed, chunk: Chunk, source: str, file: str) -> Parsed:
    """`parsed` with every record of `chunk` that held bytes that are not UTF-8 quarantined: a staged
    one moves to the rejects with its money, a rejected one gains the reason."""
    if UNDECODABLE not in chunk.frame.columns:
        return parsed
    marks = chunk.frame.filter(pl.col(UNDECODABLE).is_not_null()).select(
        pl.col("_row").cast(pl.Int64), pl.col(UNDECODABLE).alias("_why"))
    if marks.height == 0:
        return parsed
    rejects = parsed.rejects.join(
        marks.select(pl.format("row {}", "_row").alias("row_ref"), "_why"), on="row_ref", how="left",
        maintain_order="left",
    ).with_columns(
        pl.when(pl.col("_why").is_null()).then(pl.col("reason"))
        .otherwise(pl.format("{}; {}", "_why", "reason")).alias("reason")
    ).drop("_why")
    rows = parsed.rows
    if rows.height == 0 or "_row" not in rows.columns:
        parsed.rejects = rejects
        return parsed
    rows = rows.with_columns(pl.col("_row").cast(pl.Int64).alias("_row_key"))
    moving = rows.join(marks, left_on="_row_key", right_on="_row", how="inner", maintain_order="left")
    if moving.height == 0:
        parsed.rejects = rejects
        return parsed
    whole = without_undecodable(chunk.whole_records(moving["_row_key"].to_list()))
    payloads = whole.select(
        pl.col("_row").alias("_row_key"),
        pl.struct([c for c in whole.columns if c != "_row"]).struct.json_encode().alias("payload"),
    )
    moved = moving.join(payloads, on="_row_key", how="left", maintain_order="left").select(
        pl.lit(source).alias("source"),
        pl.lit(file).alias("file"),
        pl.format("row {}", "_row_key").alias("row_ref"),
        pl.col("_why").alias("reason"),
        "payload",
        *[pl.col(c) if c in moving.columns else pl.lit(None) for c in _KEPT],
        pl.col("charge_period_start").dt.date().alias("day"),
    )
    moved = moved.select([pl.col(c).cast(t) for c, t in QUARANTINE_SCHEMA.items()])
    parsed.rows = rows.filter(~pl.col("_row_key").is_in(marks["_row"].implode())).drop("_row_key")
    parsed.rejects = pl.concat([rejects, moved])
    return parsed
