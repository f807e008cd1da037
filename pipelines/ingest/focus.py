"""FOCUS 1.0–1.2 bill files (CSV, CSV.gz, Parquet) → staging.stg_focus__bill_lines rows.

Versions: every column read here has the same name from 1.0 to 1.2, and only ChargePeriodStart/End,
ChargeCategory, BilledCost and EffectiveCost are required; the others are read when present, so the
columns 1.1 added (CapacityReservationId/Status, CommitmentDiscountQuantity/Unit, SkuMeter,
SkuPriceDetails, ServiceSubcategory) and 1.2 added (InvoiceId, BillingAccountType, PricingCurrency…)
are simply optional. 1.3 renames ProviderName to ServiceProviderName (with HostProviderName beside
it): both spellings are read. Extra columns, with or without the `x_` prefix (the FinOps sample has an
`Id`), are ignored, except `x_LineItemId`, the line id."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl

from models.landing import CHARGE_CATEGORIES, COMMITMENT_STATUSES, FocusBillLine
from pipelines.ingest.common import (
    add_broken_lines,
    Parsed,
    blank_to_null,
    cast_failures,
    file_reject,
    money_precision_failure,
    read_csv_leniently,
    split_by_contract,
    to_float,
    to_money,
    to_utc,
)

SOURCE = "focus"
REQUIRED = ["ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "BilledCost", "EffectiveCost"]

# staging column <- FOCUS column. Names stable from 1.0 to 1.2 except where a tuple lists the older
# spelling after the newer (ProviderName became ServiceProviderName in 1.3; x_ columns are ours).
STRING_COLUMNS: dict[str, tuple[str, ...]] = {
    "line_id": ("x_LineItemId",),
    "billing_account_id": ("BillingAccountId",),
    "billing_currency": ("BillingCurrency",),
    "charge_category": ("ChargeCategory",),
    "charge_class": ("ChargeClass",),
    "charge_frequency": ("ChargeFrequency",),
    "charge_description": ("ChargeDescription",),
    "pricing_category": ("PricingCategory",),
    "pricing_unit": ("PricingUnit",),
    "consumed_unit": ("ConsumedUnit",),
    "commitment_discount_id": ("CommitmentDiscountId",),
    "commitment_discount_type": ("CommitmentDiscountType",),
    "commitment_discount_category": ("CommitmentDiscountCategory",),
    "commitment_discount_status": ("CommitmentDiscountStatus",),
    "provider_name": ("ServiceProviderName", "ProviderName"),
    "invoice_id": ("InvoiceId",),
    "region_id": ("RegionId",),
    "resource_id": ("ResourceId",),
    "resource_name": ("ResourceName",),
    "resource_type": ("ResourceType",),
    "service_category": ("ServiceCategory",),
    "service_name": ("ServiceName",),
    "sku_id": ("SkuId",),
    "sub_account_id": ("SubAccountId",),
    "tags": ("Tags",),
}
MONEY_COLUMNS = {
    "billed_cost": "BilledCost",
    "effective_cost": "EffectiveCost",
    "list_cost": "ListCost",
    "contracted_cost": "ContractedCost",
}
TIME_COLUMNS = {
    "charge_period_start": "ChargePeriodStart",
    "charge_period_end": "ChargePeriodEnd",
    "billing_period_start": "BillingPeriodStart",
    "billing_period_end": "BillingPeriodEnd",
}
FLOAT_COLUMNS = {"pricing_quantity": "PricingQuantity", "consumed_quantity": "ConsumedQuantity"}
STAGED = ["_file", "_row", "source", *STRING_COLUMNS, *MONEY_COLUMNS, *TIME_COLUMNS, *FLOAT_COLUMNS]


def read_table(path: Path) -> tuple[pl.DataFrame, list[tuple[int, str, str]]]:
    """Every column as a string, exactly as written (Parquet values are rendered as text), with a
    `_row` column (the record's 1-based row, or for a CSV read leniently its line number), and the
    lines that could not be read as records (line, text, reason)."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        df = pl.read_parquet(path)
        return df.select(pl.all().cast(pl.String)).with_row_index("_row", offset=1), []
    data = path.read_bytes()
    if name.endswith(".gz"):
        data = gzip.decompress(data)
    try:
        return pl.read_csv(data, infer_schema=False, encoding="utf8").with_row_index("_row", offset=1), []
    except Exception:  # a broken quote, bytes that are not UTF-8: read what can be read, line by line
        frame, broken = read_csv_leniently(data)
        # the header is line 1, so a one-line record's data row is its line number − 1
        return frame.with_columns((pl.col("_line") - 1).alias("_row")).drop("_line"), broken


def parse(path: Path, file: str, source: str = SOURCE) -> Parsed:
    try:
        raw, broken = read_table(path)
    except Exception as err:  # any unreadable file is quarantined whole, never fatal
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(source, file, f"unreadable file: {err}"))
    raw = raw.rename({c: c.strip() for c in raw.columns})
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        return Parsed(
            rows=pl.DataFrame(),
            rejects=file_reject(source, file, f"missing required FOCUS column(s): {', '.join(missing)}"),
        )
    parsed = from_focus_frame(raw, file, source)
    return add_broken_lines(parsed, source, file, broken)


def from_focus_frame(raw: pl.DataFrame, file: str, source: str) -> Parsed:
    """Casts a frame of FOCUS columns (all strings, and `_row`) to staging rows and rejects."""
    if "_row" not in raw.columns:
        raw = raw.with_row_index("_row", offset=1)
    raw_columns = [c for c in raw.columns if c != "_row"]
    df = raw.with_columns(
        *[_first_present(raw, names).alias(col) for col, names in STRING_COLUMNS.items()],
        *[to_money(c).alias(col) if c in raw.columns else pl.lit(None, dtype=pl.Decimal(38, 18)).alias(col)
          for col, c in MONEY_COLUMNS.items()],
        *[to_utc(c).alias(col) if c in raw.columns else pl.lit(None, dtype=pl.Datetime("us")).alias(col)
          for col, c in TIME_COLUMNS.items()],
        *[to_float(c).alias(col) if c in raw.columns else pl.lit(None, dtype=pl.Float64).alias(col)
          for col, c in FLOAT_COLUMNS.items()],
        pl.lit(file).alias("_file"),
        pl.lit(source).alias("source"),
    )
    df = df.with_columns(
        _canonical("charge_category", CHARGE_CATEGORIES),
        _canonical("commitment_discount_status", COMMITMENT_STATUSES),
        pl.col("charge_frequency").str.replace(r"(?i)^usage-based$", "Usage-Based"),
        pl.col("tags").map_elements(normalize_tags, return_dtype=pl.String, skip_nulls=True),
    )
    casts = {col: (c, "a number") for col, c in MONEY_COLUMNS.items()}
    casts |= {col: (c, "a timestamp") for col, c in TIME_COLUMNS.items()}
    casts |= {col: (c, "a number") for col, c in FLOAT_COLUMNS.items()}
    casts["tags"] = ("Tags", "a JSON object")
    first_row = pl.col("_row").min().over("line_id")
    duplicate = (
        pl.when(pl.col("line_id").is_not_null() & (pl.col("_row") != first_row))
        .then(pl.format("x_LineItemId '{}' repeats row {}", pl.col("line_id"), first_row))
    )
    precision = [money_precision_failure(c) for c in MONEY_COLUMNS.values() if c in df.columns]
    df = df.with_columns(
        pl.concat_list(cast_failures(df, casts), duplicate, *precision).list.drop_nulls().alias("_errors")
    )
    staged, rejects = split_by_contract(
        df,
        FocusBillLine,
        source=source,
        file=file,
        staged_columns=STAGED,
        raw_columns=raw_columns,
        row_ref=pl.format("row {}", pl.col("_row")),
        reject_extras={
            "effective_cost": pl.col("effective_cost"),
            "billed_cost": pl.col("billed_cost"),
            "billing_currency": pl.col("billing_currency"),
            "charge_period_start": pl.col("charge_period_start"),
            "charge_period_end": pl.col("charge_period_end"),
            "day": pl.col("charge_period_start").dt.date(),
        },
    )
    return Parsed(rows=staged, rejects=rejects)


def _first_present(raw: pl.DataFrame, names: tuple[str, ...]) -> pl.Expr:
    present = [blank_to_null(n) for n in names if n in raw.columns]
    return pl.coalesce(present) if present else pl.lit(None, dtype=pl.String)


def _canonical(col: str, values: list[str]) -> pl.Expr:
    """Providers vary the case of enum values (`usage`, `USAGE`); FOCUS spells them one way."""
    expr = pl.col(col)
    for v in values:
        expr = pl.when(pl.col(col).str.to_lowercase() == v.lower()).then(pl.lit(v)).otherwise(expr)
    return expr.alias(col)


def normalize_tags(text: str) -> str | None:
    """FOCUS Tags as a JSON object with trimmed keys (real exports carry keys like " org"); None when
    the text is not a JSON object."""
    try:
        obj = json.loads(text)
        if not isinstance(obj, dict):
            return None
        return json.dumps({str(k).strip(): v for k, v in obj.items()}, sort_keys=True)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads
        return None
