"""FOCUS 1.0–1.2 bill files (CSV, CSV.gz, Parquet) → staging.stg_focus__bill_lines rows.

A file is read a chunk of records at a time, only the columns staging reads (`chunks`); amounts are
read exactly and stored at 1e-18 with their rounding (`money`); rows that fail the FocusBillLine
contract are quarantined with their money. What is read and refused: docs/ingest/focus.md."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from models.currencies import check_currency
from models.landing import CHARGE_CATEGORIES, COMMITMENT_STATUSES, TS, FocusBillLine
from pipelines.ingest.chunks import Chunk, Picker, RepeatedColumn, Render, as_strings, read_ahead, read_chunks
from pipelines.ingest.common import (Check, add_broken_lines, blank_to_null, by_distinct, cast_checks, distinct_through_sql,
                                     split_by_contract, spread, unread_casts, utc)
from pipelines.landing.parsed import Parsed, combine, file_reject, refuses_file
from pipelines.ingest.foreign_exports import foreign_export
from pipelines.ingest.money import EXACT, exact_money
from pipelines.ingest.undecodable import quarantine_undecodable, without_undecodable
from pipelines.lib.warehouse import sql, step

SOURCE = "focus"
REQUIRED = ["ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "BilledCost", "EffectiveCost"]

# staging column <- FOCUS column. Names stable from 1.0 to 1.2 except where a tuple lists the older
# spelling after the newer (ProviderName became ServiceProviderName in 1.3; x_ columns are ours).
STRING_COLUMNS: dict[str, tuple[str, ...]] = {
    "line_id": ("x_LineItemId",),
    "billing_account_id": ("BillingAccountId",),
    "billing_account_name": ("BillingAccountName",),
    "billing_currency": ("BillingCurrency",),
    "charge_category": ("ChargeCategory",),
    "charge_class": ("ChargeClass",),
    "charge_frequency": ("ChargeFrequency",),
    "charge_description": ("ChargeDescription",),
    "pricing_category": ("PricingCategory",),
    "pricing_unit": ("PricingUnit",),
    "pricing_currency": ("PricingCurrency",),
    "consumed_unit": ("ConsumedUnit",),
    "commitment_discount_id": ("CommitmentDiscountId",),
    "commitment_discount_type": ("CommitmentDiscountType",),
    "commitment_discount_category": ("CommitmentDiscountCategory",),
    "commitment_discount_status": ("CommitmentDiscountStatus",),
    "provider_name": ("ServiceProviderName", "ProviderName"),
    "host_provider_name": ("HostProviderName",),
    "publisher_name": ("PublisherName",),
    "invoice_issuer_name": ("InvoiceIssuerName",),
    "invoice_id": ("InvoiceId",),
    "region_id": ("RegionId",),
    "resource_id": ("ResourceId",),
    "resource_name": ("ResourceName",),
    "resource_type": ("ResourceType",),
    "service_category": ("ServiceCategory",),
    "service_name": ("ServiceName",),
    "service_subcategory": ("ServiceSubcategory",),
    "sku_id": ("SkuId",),
    "sub_account_id": ("SubAccountId",),
    "sub_account_name": ("SubAccountName",),
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



def focus_columns(header: list[str]) -> list[str]:
    """The columns of a FOCUS file that staging reads."""
    known = {n for names in STRING_COLUMNS.values() for n in names}
    known |= {*MONEY_COLUMNS.values(), *TIME_COLUMNS.values(), *FLOAT_COLUMNS.values()}
    return [c for c in header if c in known]


def parse(con: duckdb.DuckDBPyConnection, path: Path, file: str, source: str = SOURCE,
          default_currency: str = DEFAULT_CURRENCY) -> Parsed:
    """A FOCUS file's rows; a row without BillingCurrency takes `default_currency`. `con` is the
    caller's DuckDB (in sync a cursor of the warehouse connection, of the thread that parses), which
    the Tags are normalised on: a parser opens no DuckDB of its own."""
    return combine(parse_chunks(con, path, file, source, default_currency))


def parse_chunks(
    con: duckdb.DuckDBPyConnection, path: Path, file: str, source: str = SOURCE,
    default_currency: str = DEFAULT_CURRENCY
) -> Iterator[Parsed]:
    """`parse`, a chunk of the file at a time."""

    def parse_chunk(raw: pl.DataFrame, seen: LineIds) -> Parsed:
        missing = [c for c in REQUIRED if c not in raw.columns]
        if missing:
            reason = foreign_export(header) or f"missing required FOCUS column(s): {', '.join(missing)}"
            return Parsed(rows=pl.DataFrame(), rejects=file_reject(source, file, reason))
        return from_focus_frame(con, raw, file, source, default_currency=default_currency, seen=seen)

    header: list[str] = []

    def pick(names: list[str]) -> list[str]:
        header[:] = names  # the whole header, to tell another export by (the frame has only FOCUS columns)
        return focus_columns(names)

    return parse_in_chunks(path, file, source, pick, parse_chunk)


@dataclass
class LineIds:
    """The row each line id first appeared in, over the chunks of a file read so far (with the id's
    64-bit hash, which a chunk's ids are looked up by before the ids themselves are compared)."""

    first_rows: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema={"_hash": pl.UInt64, "line_id": pl.String, "_seen_row": pl.Int64})
    )


def parse_in_chunks(
    path: Path,
    file: str,
    source: str,
    pick: Picker,
    parse_chunk: Callable[[pl.DataFrame, LineIds], Parsed],
    render: Render = as_strings,
    payload_name: Callable[[str], str] = lambda c: c,
) -> Iterator[Parsed]:
    """Reads the file a chunk at a time (see `chunks.read_chunks`) and parses each chunk with
    `parse_chunk(frame, line ids seen so far)`; a chunk parsed into a whole-file rejection (a header
    that is no bill's) ends the file. Quarantined rows get their whole record as payload (a file
    column `c` under the key `payload_name(c)`); lines that are no records are quarantined too."""
    seen = LineIds()
    chunks = read_ahead(read_chunks(path, pick, render))
    while True:
        try:
            chunk = next(chunks)
        except StopIteration:
            return
        except RepeatedColumn as err:  # refused by name, not "unreadable"
            yield Parsed(rows=pl.DataFrame(), rejects=file_reject(source, file, f"file {file}: {err}"))
            return
        except Exception as err:  # any unreadable file is quarantined whole, never fatal
            yield Parsed(rows=pl.DataFrame(), rejects=file_reject(source, file, f"unreadable file: {err}"))
            return
        parsed = parse_chunk(without_undecodable(chunk.frame), seen)
        if refuses_file(parsed):
            yield parsed
            return
        parsed.rejects = complete_payloads(parsed.rejects, chunk, payload_name)
        parsed = quarantine_undecodable(parsed, chunk, source, file)
        yield add_broken_lines(parsed, source, file, chunk.broken)


def complete_payloads(rejects: pl.DataFrame, chunk: Chunk, payload_name: Callable[[str], str]) -> pl.DataFrame:
    """Adds to each quarantined row's payload the columns of its record that parsing did not read,
    so the payload holds the whole record while the parse reads only the columns it needs."""
    if chunk.whole or rejects.height == 0:
        return rejects
    row = pl.col("row_ref").str.extract(r"^row (\d+)$", 1).cast(pl.Int64, strict=False)
    rows = rejects.select(row.drop_nulls().unique()).to_series().to_list()
    if not rows:
        return rejects
    records = chunk.whole_records(rows)
    read = set(chunk.frame.columns)
    rest = [c for c in records.columns if c != "_row" and c not in read]
    if not rest:
        return rejects
    extra = records.select(
        pl.col("_row"),
        pl.struct([pl.col(c).alias(payload_name(c)) for c in rest]).struct.json_encode().alias("_rest"),
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
    con: duckdb.DuckDBPyConnection,
    raw: pl.DataFrame,
    file: str,
    source: str,
    *,
    default_currency: str = DEFAULT_CURRENCY,
    given: dict[str, pl.Expr] | None = None,
    clean: bool = False,
    seen: LineIds | None = None,
) -> Parsed:
    """Casts a frame of FOCUS columns (all strings, and `_row`) to staging rows and rejects; the
    Tags are normalised on the caller's DuckDB `con` (`normalized_tags`).

    Amounts are read exactly (see `pipelines.ingest.money`): stored at 1e-18, with what the rounding
    took off EffectiveCost and BilledCost in `*_rounding`. `given` holds staging columns a converter
    has already worked out from its own columns: amounts as EXACT structs (a problem worded after
    the quoted value, as `money.exact_money` words it), times as UTC datetimes (the FOCUS text stays
    for the reason when one did not parse); the others are read from the FOCUS columns. `clean` says
    the FOCUS text holds no blanks or null spellings (a converter built it), so it is not cleared
    again. `seen` holds the line ids of the file's earlier chunks (and gains this chunk's), so a
    repeat is found across chunks."""
    if "_row" not in raw.columns:
        raw = raw.with_row_index("_row", offset=1)
    given = given or {}
    worked_out = _given_columns(given)
    payload_columns = [c for c in raw.columns if c != "_row" and c not in worked_out]
    money = {col: given[col] if col in given else _focus_amount(raw, c) for col, c in MONEY_COLUMNS.items()}
    text = (lambda c: pl.col(c)) if clean else blank_to_null
    df = raw.with_columns(
        *[_first_present(raw, names, text).alias(col) for col, names in STRING_COLUMNS.items()],
        *[expr.alias(f"_amount.{col}") for col, expr in money.items()],
        *[given[col].alias(col) if col in given
          else by_distinct(text(c), utc, TS).alias(col) if c in raw.columns else pl.lit(None, dtype=TS).alias(col)
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
        pl.col("billing_currency").is_null().alias("_currency_defaulted"),
        pl.col("billing_currency").fill_null(default_currency).alias("_currency_as_written"),
        # kept upper-cased, so a quarantined `usd` is never a currency of its own beside USD
        pl.col("billing_currency").fill_null(default_currency).str.to_uppercase(),
    )
    # here, on the calling thread, not in a polars expression: an expression's function may run on one of
    # polars' threads, and a DuckDB connection is used by one thread at a time
    df = df.with_columns(normalized_tags(con, df["tags"]))
    casts = {col: (c, "a timestamp") for col, c in TIME_COLUMNS.items()}
    casts |= {col: (c, "a number") for col, c in FLOAT_COLUMNS.items()}
    casts["tags"] = ("Tags", "a JSON object")
    df, repeats = _repeated_line_ids(df, seen or LineIds())
    checks = [*cast_checks(df, casts, clean=clean), *repeats, _currency_check(df, source)]
    # the values named by a check above, which the contract does not call empty as well
    unread = unread_casts(df, casts, clean=clean)
    for col, name in MONEY_COLUMNS.items():  # `BilledCost 'abc' is not a number`
        problem = pl.col(f"_amount.{col}").struct.field("problem")
        checks.append((problem.is_not_null(), pl.format("{} {}", pl.lit(name), problem)))
        unread[col] = problem.is_not_null()
        if col in ROUNDED:
            unread[f"{col}_rounding"] = problem.is_not_null()
    staged, rejects = split_by_contract(
        df,
        FocusBillLine,
        source=source,
        file=file,
        staged_columns=[*STAGED, "_currency_defaulted"],
        raw_columns=payload_columns,
        row_ref=pl.format("row {}", pl.col("_row")),
        checks=checks,
        unread=unread,
        reject_extras={
            "effective_cost": pl.col("effective_cost"),
            "billed_cost": pl.col("billed_cost"),
            "billing_currency": pl.col("billing_currency"),
            "effective_cost_rounding": pl.col("effective_cost_rounding"),
            "billed_cost_rounding": pl.col("billed_cost_rounding"),
            "charge_period_start": pl.col("charge_period_start"),
            "charge_period_end": pl.col("charge_period_end"),
            "day": pl.col("charge_period_start").dt.date(),
        },
    )
    # staged and quarantined rows alike: both carry the default as their currency
    defaulted = int(df["_currency_defaulted"].sum())
    parsed = Parsed(rows=staged.drop("_currency_defaulted"), rejects=rejects)
    if defaulted:
        parsed.defaulted["billing_currency"] = {default_currency: defaulted}
    return parsed


def _currency_check(df: pl.DataFrame, source: str) -> Check:
    """`BillingCurrency 'dollars' is not an ISO 4217 currency code …` (models/currencies.py), worded
    once per distinct value."""
    name = "lineItem/CurrencyCode" if source == "aws_cur" else "BillingCurrency"
    written = df["_currency_as_written"].drop_nulls().unique()
    problems = {code: problem for code in written.to_list() if (problem := check_currency(code))}
    if not problems:
        return pl.lit(False), pl.lit(None, dtype=pl.String)
    as_written = pl.col("_currency_as_written")
    return (as_written.is_in(list(problems)),
            pl.format("{} {}", pl.lit(name), as_written.replace_strict(problems, default=None, return_dtype=pl.String)))


def _given_columns(given: dict[str, pl.Expr]) -> set[str]:
    """The frame columns the `given` expressions read (not input: kept out of the payload)."""
    return {name for expr in given.values() for name in expr.meta.root_names()}


def _focus_amount(raw: pl.DataFrame, column: str) -> pl.Expr:
    """A FOCUS amount column read exactly; a missing column is all null."""
    return exact_money(pl.col(column)) if column in raw.columns else pl.lit(None, dtype=EXACT)


def _repeated_line_ids(df: pl.DataFrame, seen: LineIds) -> tuple[pl.DataFrame, list[Check]]:
    """`x_LineItemId '<id>' repeats row <n>` for every line after the first with its id, in this
    chunk or an earlier one (`df` gains the row each repeated id first appeared in)."""
    ids = pl.col("line_id")
    df = df.with_columns((ids.is_not_null() & ids.is_first_distinct()).alias("_first_here"))
    hashes = df.select(ids.hash(seed=0).alias("_hash"), "line_id", pl.col("_row").cast(pl.Int64).alias("_seen_row"))
    earlier = seen.first_rows.filter(pl.col("_hash").is_in(hashes["_hash"].implode()))
    if earlier.height:  # ids hashed alike: the ids themselves decide
        df = df.join(earlier.select("line_id", "_seen_row"), on="line_id", how="left", maintain_order="left")
    else:
        df = df.with_columns(pl.lit(None, dtype=pl.Int64).alias("_seen_row"))
    new_ids = hashes.filter(df["_first_here"] & df["_seen_row"].is_null())
    seen.first_rows = pl.concat([seen.first_rows, new_ids])
    repeated = ids.is_not_null() & (~pl.col("_first_here") | pl.col("_seen_row").is_not_null())
    if not df.select(repeated.any()).item():  # the window below is worth skipping when no id repeats
        return df, []
    df = df.with_columns(pl.coalesce("_seen_row", pl.col("_row").min().over("line_id")).alias("_first_row"))
    return df, [(repeated, pl.format("x_LineItemId '{}' repeats row {}", ids, pl.col("_first_row")))]


def _first_present(raw: pl.DataFrame, names: tuple[str, ...], text: Callable[[str], pl.Expr]) -> pl.Expr:
    present = [text(n) for n in names if n in raw.columns]
    return pl.coalesce(present) if present else pl.lit(None, dtype=pl.String)


def _canonical(col: str, values: list[str]) -> pl.Expr:
    """Providers vary the case of enum values (`usage`, `USAGE`); FOCUS spells them one way."""
    spelled = {v.lower(): v for v in values}

    def canonical(text: pl.Expr) -> pl.Expr:
        return text.str.to_lowercase().replace_strict(spelled, default=text, return_dtype=pl.String)

    return by_distinct(pl.col(col), canonical, pl.String).alias(col)


def normalized_tags(con: duckdb.DuckDBPyConnection, values: pl.Series) -> pl.Series:
    """FOCUS Tags as a JSON object with trimmed keys (real exports carry keys like " org"), in key
    order; null when the text is not a JSON object (sql/staging/stg_focus__bill_lines/10_tags.sql).
    Worked out once per distinct Tags text."""
    read = distinct_through_sql(con, values, "tags_in", sql(step("staging/stg_focus__bill_lines", "tags")))
    if read is None:
        return values
    distinct, table = read
    by_value = distinct.to_frame("value").join(table, on="value", how="left", maintain_order="left")
    return spread(values, distinct, by_value["tags"])
