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
import re
from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl

from models.landing import CHARGE_CATEGORIES, COMMITMENT_STATUSES, TS, FocusBillLine
from pipelines.ingest.common import (
    Check,
    Parsed,
    add_broken_lines,
    blank_to_null,
    by_distinct,
    cast_checks,
    file_reject,
    read_csv_leniently,
    split_by_contract,
    utc,
)
from pipelines.ingest.money import EXACT, exact_money
from pipelines.lib.warehouse import sql

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
# the amounts whose rounding to 1e-18 is recorded beside them (staging and ops.quarantine)
ROUNDED = ["effective_cost", "billed_cost"]
STAGED = ["_file", "_row", "source", *STRING_COLUMNS, *MONEY_COLUMNS, *[f"{c}_rounding" for c in ROUNDED],
          *TIME_COLUMNS, *FLOAT_COLUMNS]
DEFAULT_CURRENCY = "USD"

Broken = tuple[int, str, str]  # a CSV line that is no record: (line number, text, reason)
Picker = Callable[[list[str]], list[str]]  # a file's header -> the columns to read from it


def as_strings(df: pl.DataFrame) -> pl.DataFrame:
    return df.select(pl.all().cast(pl.String))


def read_table(
    path: Path, pick: Picker | None = None, render: Callable[[pl.DataFrame], pl.DataFrame] = as_strings
) -> tuple[pl.DataFrame, list[Broken], bool]:
    """The columns `pick` chooses from the file's header (all without it) as strings, exactly as
    written (Parquet values are rendered as text: a DOUBLE as its shortest round-trip decimal), with a
    `_row` column (the record's 1-based row, or for a CSV read leniently its line number); the lines
    that could not be read as records (line, text, reason); and whether every column was read.
    Header names are given with surrounding spaces trimmed; `render` turns Parquet columns into text."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        names = list(pl.read_parquet_schema(path))
        chosen = _chosen(names, pick)
        df = render(pl.read_parquet(path, columns=chosen))
        return _trimmed(df).with_row_index("_row", offset=1), [], len(chosen) == len(names)
    source: Path | bytes = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path
    try:
        names = pl.read_csv(source, n_rows=0, infer_schema=False, encoding="utf8").columns
        chosen = _chosen(names, pick)
        df = pl.read_csv(source, columns=chosen, infer_schema=False, encoding="utf8")
        return _trimmed(df).with_row_index("_row", offset=1), [], len(chosen) == len(names)
    except Exception:  # a broken quote, bytes that are not UTF-8: read what can be read, line by line
        frame, broken = read_csv_leniently(source if isinstance(source, bytes) else path.read_bytes())
        # the header is line 1, so a one-line record's data row is its line number − 1
        return _trimmed(frame.with_columns((pl.col("_line") - 1).alias("_row")).drop("_line")), broken, True


def read_rows(path: Path, rows: list[int], render: Callable[[pl.DataFrame], pl.DataFrame] = as_strings) -> pl.DataFrame:
    """Every column of the given 1-based data rows (as `read_table` numbers them), as strings: the
    whole records of quarantined lines, for their payload, when parsing read only some columns."""
    wanted = pl.col("_row").is_in(rows)
    name = path.name.lower()
    if name.endswith(".parquet"):
        frame = pl.scan_parquet(path).with_row_index("_row", offset=1).filter(wanted).collect()
        return _trimmed(pl.concat([frame.select("_row"), render(frame.drop("_row"))], how="horizontal"))
    if name.endswith(".gz"):
        frame = pl.read_csv(gzip.decompress(path.read_bytes()), infer_schema=False).with_row_index("_row", offset=1)
        return _trimmed(frame.filter(wanted))
    return _trimmed(pl.scan_csv(path, infer_schema=False).with_row_index("_row", offset=1).filter(wanted).collect())


def _chosen(names: list[str], pick: Picker | None) -> list[str]:
    if pick is None:
        return names
    wanted = set(pick([n.strip() for n in names]))
    return [n for n in names if n.strip() in wanted]


def _trimmed(df: pl.DataFrame) -> pl.DataFrame:
    return df.rename({c: c.strip() for c in df.columns if c != c.strip()})


def focus_columns(header: list[str]) -> list[str]:
    """The columns of a FOCUS file that staging reads."""
    known = {n for names in STRING_COLUMNS.values() for n in names}
    known |= {*MONEY_COLUMNS.values(), *TIME_COLUMNS.values(), *FLOAT_COLUMNS.values()}
    return [c for c in header if c in known]


def parse(path: Path, file: str, source: str = SOURCE, default_currency: str = DEFAULT_CURRENCY) -> Parsed:
    """A FOCUS file's rows; a row without BillingCurrency takes `default_currency`."""
    try:
        raw, broken, whole = read_table(path, focus_columns)
    except Exception as err:  # any unreadable file is quarantined whole, never fatal
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(source, file, f"unreadable file: {err}"))
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        return Parsed(
            rows=pl.DataFrame(),
            rejects=file_reject(source, file, f"missing required FOCUS column(s): {', '.join(missing)}"),
        )
    parsed = from_focus_frame(raw, file, source, default_currency=default_currency)
    if not whole:
        parsed.rejects = complete_payloads(parsed.rejects, path, read=raw.columns)
    return add_broken_lines(parsed, source, file, broken)


def complete_payloads(
    rejects: pl.DataFrame,
    path: Path,
    read: list[str],
    rename: Callable[[str], str] = lambda c: c,
    render: Callable[[pl.DataFrame], pl.DataFrame] = as_strings,
) -> pl.DataFrame:
    """Adds to each quarantined row's payload the columns of its record that parsing did not read
    (`read` names those it did; `rename` gives a file column its payload key), so the payload holds
    the whole record while the parse reads only the columns it needs. The file is read again only
    when something was quarantined."""
    row = pl.col("row_ref").str.extract(r"^row (\d+)$", 1).cast(pl.Int64, strict=False)
    rows = rejects.select(row.drop_nulls().unique()).to_series().to_list()
    if not rows:
        return rejects
    try:
        records = read_rows(path, rows, render)
    except Exception:  # the records could be read once: keep the payload of what was read then
        return rejects
    rest = [c for c in records.columns if c != "_row" and c not in set(read)]
    if not rest:
        return rejects
    extra = records.select(
        pl.col("_row").cast(pl.Int64),
        pl.struct([pl.col(c).alias(rename(c)) for c in rest]).struct.json_encode().alias("_rest"),
    )
    merged = rejects.with_columns(row.alias("_row")).join(extra, on="_row", how="left", maintain_order="left")
    payload, rest_json = pl.col("payload"), pl.col("_rest")
    return merged.with_columns(
        pl.when(rest_json.is_null()).then(payload)
        .when(payload.is_null() | (payload == "{}")).then(rest_json)
        .otherwise(payload.str.strip_suffix("}") + pl.lit(",") + rest_json.str.strip_prefix("{"))
        .alias("payload")
    ).select(rejects.columns)


def from_focus_frame(
    raw: pl.DataFrame,
    file: str,
    source: str,
    *,
    default_currency: str = DEFAULT_CURRENCY,
    amounts: dict[str, pl.Expr] | None = None,
    clean: bool = False,
) -> Parsed:
    """Casts a frame of FOCUS columns (all strings, and `_row`) to staging rows and rejects.

    Amounts are read exactly (see `pipelines.ingest.money`): stored at 1e-18, with what the rounding
    took off EffectiveCost and BilledCost in `*_rounding`. `amounts` gives staging money columns as
    EXACT structs already read (whose `problem` is the whole reason), for converters that compute
    them; the others are read from the FOCUS columns. `clean` says the FOCUS text holds no blanks or
    null spellings (a converter built it), so it is not cleared again."""
    if "_row" not in raw.columns:
        raw = raw.with_row_index("_row", offset=1)
    amounts = amounts or {}
    payload_columns = [c for c in raw.columns if c != "_row" and raw.schema[c] != EXACT]
    money = {
        col: amounts[col] if col in amounts else _focus_amount(raw, c) for col, c in MONEY_COLUMNS.items()
    }
    text = (lambda c: pl.col(c)) if clean else blank_to_null
    df = raw.with_columns(
        *[_first_present(raw, names, text).alias(col) for col, names in STRING_COLUMNS.items()],
        *[expr.alias(f"_amount.{col}") for col, expr in money.items()],
        *[by_distinct(text(c), utc, TS).alias(col) if c in raw.columns else pl.lit(None, dtype=TS).alias(col)
          for col, c in TIME_COLUMNS.items()],
        *[text(c).cast(pl.Float64, strict=False).alias(col) if c in raw.columns
          else pl.lit(None, dtype=pl.Float64).alias(col) for col, c in FLOAT_COLUMNS.items()],
        pl.lit(file).alias("_file"),
        pl.lit(source).alias("source"),
    )
    df = df.with_columns(
        *[pl.col(f"_amount.{col}").struct.field("amount").alias(col) for col in MONEY_COLUMNS],
        *[pl.col(f"_amount.{col}").struct.field("rounding").alias(f"{col}_rounding") for col in ROUNDED],
        _canonical("charge_category", CHARGE_CATEGORIES),
        _canonical("commitment_discount_status", COMMITMENT_STATUSES),
        pl.col("charge_frequency").str.replace(r"(?i)^usage-based$", "Usage-Based"),
        normalize_tags(pl.col("tags")).alias("tags"),
        pl.col("billing_currency").is_null().alias("_currency_defaulted"),
        pl.col("billing_currency").fill_null(default_currency),
    )
    casts = {col: (c, "a timestamp") for col, c in TIME_COLUMNS.items()}
    casts |= {col: (c, "a number") for col, c in FLOAT_COLUMNS.items()}
    casts["tags"] = ("Tags", "a JSON object")
    problems = [pl.col(f"_amount.{col}").struct.field("problem") for col in MONEY_COLUMNS]
    df, repeats = _repeated_line_ids(df)
    checks = [
        *cast_checks(df, casts, clean=clean),
        *repeats,
        *[(problem.is_not_null(), problem) for problem in problems],
    ]
    staged, rejects = split_by_contract(
        df,
        FocusBillLine,
        source=source,
        file=file,
        staged_columns=[*STAGED, "_currency_defaulted"],
        raw_columns=payload_columns,
        row_ref=pl.format("row {}", pl.col("_row")),
        checks=checks,
        reject_extras={
            "effective_cost": pl.col("effective_cost"),
            "billed_cost": pl.col("billed_cost"),
            "effective_cost_rounding": pl.col("effective_cost_rounding"),
            "billed_cost_rounding": pl.col("billed_cost_rounding"),
            "charge_period_start": pl.col("charge_period_start"),
            "charge_period_end": pl.col("charge_period_end"),
            "day": pl.col("charge_period_start").dt.date(),
        },
    )
    defaulted = int(staged["_currency_defaulted"].sum())
    parsed = Parsed(rows=staged.drop("_currency_defaulted"), rejects=rejects)
    if defaulted:
        parsed.defaulted["billing_currency"] = {default_currency: defaulted}
    return parsed


def _focus_amount(raw: pl.DataFrame, column: str) -> pl.Expr:
    """A FOCUS amount column read exactly, its problem worded as the reason (`BilledCost 'x' is not a
    number`); a missing column is all null."""
    if column not in raw.columns:
        return pl.lit(None, dtype=EXACT)
    return amount_with_reason(exact_money(pl.col(column)), pl.lit(column), pl.col(column).cast(pl.String))


def amount_with_reason(amount: pl.Expr, label: pl.Expr, value: pl.Expr) -> pl.Expr:
    """An EXACT struct whose problem (if any) becomes the whole reason: `<label> '<value>' <problem>`."""
    problem = amount.struct.field("problem")
    return pl.struct(
        amount.struct.field("amount"),
        amount.struct.field("rounding"),
        pl.when(problem.is_not_null()).then(pl.format("{} '{}' {}", label, value, problem)).alias("problem"),
    )


def _repeated_line_ids(df: pl.DataFrame) -> tuple[pl.DataFrame, list[Check]]:
    """`x_LineItemId '<id>' repeats row <n>` for every line after the first with its id (`df` gains
    the row each id first appears in, when some id repeats)."""
    repeated = pl.col("line_id").is_not_null() & ~pl.col("line_id").is_first_distinct()
    if not df.select(repeated.any()).item():  # the window below is worth skipping when no id repeats
        return df, []
    df = df.with_columns(pl.col("_row").min().over("line_id").alias("_first_row"))
    return df, [(repeated, pl.format("x_LineItemId '{}' repeats row {}", pl.col("line_id"), pl.col("_first_row")))]


def _first_present(raw: pl.DataFrame, names: tuple[str, ...], text: Callable[[str], pl.Expr]) -> pl.Expr:
    present = [text(n) for n in names if n in raw.columns]
    return pl.coalesce(present) if present else pl.lit(None, dtype=pl.String)


def _canonical(col: str, values: list[str]) -> pl.Expr:
    """Providers vary the case of enum values (`usage`, `USAGE`); FOCUS spells them one way."""
    spelled = {v.lower(): v for v in values}
    return pl.col(col).str.to_lowercase().replace_strict(spelled, default=pl.col(col), return_dtype=pl.String).alias(col)


def normalize_tags(tags: pl.Expr) -> pl.Expr:
    """FOCUS Tags as a JSON object with trimmed keys (real exports carry keys like " org"); null when
    the text is not a JSON object. Done in DuckDB, once per distinct Tags text."""
    return tags.map_batches(_normalized_tags, return_dtype=pl.String)


def _normalized_tags(values: pl.Series) -> pl.Series:
    distinct = values.drop_nulls().unique().to_frame("value")
    if distinct.height == 0:
        return values
    with duckdb.connect() as con:
        con.register("tags_in", distinct)
        table = con.sql(sql("lib/focus_tags")).pl()
    joined = values.to_frame("value").join(table, on="value", how="left", maintain_order="left")
    return joined["tags"].alias(values.name)
