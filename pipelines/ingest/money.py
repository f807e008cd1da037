"""Exact amounts from the text an exporter wrote, whatever its notation.

Exporters write money as plain decimals (`12.5`, `-3`, `.5`), with an exponent (`1.2E-7`, `5e+3`), as
float64 round-trip text with 19 or more decimals (`0.0007458096045417008`), or as Parquet DOUBLE, which
is read through its shortest round-trip decimal text (polars' Float64 → String gives the same decimal
value as Python's `repr(float)`; tests/unit/test_money.py holds it to that). Every such value is read exactly
and stored at the warehouse's fixed scale, DECIMAL(38,18), rounded half-even to 1e-18. What the rounding
took away is kept beside it: `rounding` = (exact value) − (stored value), a DECIMAL(38,38) of at most
0.5e-18 in magnitude, so stored + rounding is what the file says. A value with digits below 1e-38 has
its rounding itself rounded half-even at 1e-38 (the residual's 39th decimal and beyond are the only
thing not kept).

Nothing is refused for precision. A value is refused (`problem` says why) only when it is not a number
at all (`1,5`, `NaN`, `inf`) or is not below MAX_AMOUNT (1e12) in magnitude once rounded. DECIMAL(38,18)
itself holds up to 1e20, but the books add lines up in that same type (DuckDB's SUM of a
DECIMAL(38,18) is a DECIMAL(38,18), and fails the day past 1e20): a line below 1e12 leaves room for
any sum of up to MAX_SUMMED_LINES (1e8) lines, a day's or a month's bill of a large fleet
(docs/landing.md, "Amounts").

All of it is column-wise polars, run once per distinct text of a column and joined back: bill amounts
repeat a lot, and a column of a million lines is parsed at the cost of its distinct values.
"""

from __future__ import annotations

import polars as pl

from models.landing import MAX_AMOUNT_DIGITS, MAX_SUMMED_LINES, MONEY, ROUNDING, decimal_lit
from pipelines.ingest.common import null_spellings_to_null, spread

# an amount read from text: the stored value, what rounding to 1e-18 took off, and why it could not be
# read (null when it could, or when there was nothing to read)
EXACT = pl.Struct({"amount": MONEY, "rounding": ROUNDING, "problem": pl.String})

NOT_A_NUMBER = "is not a number"
OUT_OF_RANGE = (f"is out of range: an amount must be below 1e{MAX_AMOUNT_DIGITS} in magnitude "
                f"(so that {MAX_SUMMED_LINES:.0e} lines still add up within DECIMAL(38,18))")

# values within the limit as they are: no exponent, at most MAX_AMOUNT_DIGITS integer and 18 fraction digits
_PLAIN = rf"^[+-]?(?:\d{{1,{MAX_AMOUNT_DIGITS}}}(?:\.\d{{0,18}})?|\.\d{{1,18}})$"
_NUMBER = r"^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$"
_UNITS_LIMIT = 10 ** (MAX_AMOUNT_DIGITS + 18)  # 1e12 in units of 1e-18: the first amount refused
_TAIL = 10**20  # 1e-18 in units of 1e-38


def exact_money(expr: pl.Expr, shown: str | None = None) -> pl.Expr:
    """An amount column (text, float, decimal or integer) as an EXACT struct. A problem is worded
    with the value quoted, `'1,5' is not a number`, or with `shown=` the column it came from,
    `'lineItem/UnblendedCost=1,5' is not a number`, ready to follow the name of what it was for."""
    return expr.map_batches(lambda values: parse_amounts(values, shown), return_dtype=EXACT)


def parse_amounts(values: pl.Series, shown: str | None = None) -> pl.Series:
    """`values` as EXACT structs, computed once per distinct value (blank and NULL spellings give no
    amount, and nothing wrong with it: null fields, or a null struct)."""
    distinct = values.drop_nulls().unique()
    if distinct.len() == 0:  # a column the export leaves empty (most CUR commitment columns)
        return pl.repeat(None, len(values), dtype=EXACT, eager=True).alias(values.name)
    table = distinct.to_frame("value").with_columns(_clean(pl.col("value")).alias("text"))
    text = table.drop_nulls("text")
    plain = text.filter(pl.col("text").str.contains(_PLAIN))
    amounts = pl.concat([
        plain.select(
            "value",
            pl.col("text").cast(MONEY).alias("amount"),
            pl.lit(0, dtype=ROUNDING).alias("rounding"),
            pl.lit(None, dtype=pl.String).alias("problem"),
        ),
        _round_half_even(text.join(plain, on="value", how="anti")),
    ])
    quoted = pl.col("text") if shown is None else pl.lit(f"{shown}=") + pl.col("text")
    amounts = amounts.join(table.select("value", "text"), on="value").with_columns(
        pl.when(pl.col("problem").is_not_null()).then(pl.format("'{}' {}", quoted, pl.col("problem"))).alias("problem")
    )
    by_value = distinct.to_frame("value").join(amounts, on="value", how="left", maintain_order="left")
    return spread(values, distinct, by_value.select(pl.struct("amount", "rounding", "problem")).to_series())


def _clean(value: pl.Expr) -> pl.Expr:
    """Text with surrounding spaces trimmed, blank and NULL spellings as null; numbers as text (a
    float as its shortest round-trip decimal, a decimal or integer exactly)."""
    return null_spellings_to_null(value.cast(pl.String).str.strip_chars())


def _round_half_even(frame: pl.DataFrame) -> pl.DataFrame:
    """Any decimal text (exponent, more than 18 decimals, leading zeros) rounded half-even to 1e-18,
    with its rounding, by digit-string arithmetic: the text is shifted to a fixed point, cut after the
    18th decimal, and the next 20 decimals (plus a guard digit and a sticky bit) decide the rest."""
    if frame.height == 0:
        return frame.select(
            "value", pl.lit(None, MONEY).alias("amount"), pl.lit(None, ROUNDING).alias("rounding"),
            pl.lit(None, pl.String).alias("problem"),
        )
    parts = pl.col("text").str.extract_groups(_NUMBER)
    df = frame.with_columns(
        parts.struct.field("1").alias("sign"),
        parts.struct.field("2").alias("int"),
        parts.struct.field("3").fill_null("").alias("frac"),
        parts.struct.field("4").alias("exp"),
    )
    df = df.with_columns(
        (pl.col("int").is_not_null() & ((pl.col("int").str.len_chars() + pl.col("frac").str.len_chars()) > 0))
        .alias("is_number"),
        (pl.col("int").fill_null("") + pl.col("frac")).str.strip_chars_start("0").alias("digits"),
        # an exponent too long for Int64 only says "far too large" or "far too small"
        pl.col("exp").cast(pl.Int64, strict=False)
        .fill_null(
            pl.when(pl.col("exp").is_null()).then(0)
            .when(pl.col("exp").str.starts_with("-")).then(-(10**9))
            .otherwise(10**9)
        )
        .clip(-(10**9), 10**9)
        .alias("exp10"),
    )
    # position of the decimal point counted from the first significant digit
    df = df.with_columns(
        (pl.col("digits").str.len_chars().cast(pl.Int64) + pl.col("exp10") - pl.col("frac").str.len_chars())
        .alias("point")
    )
    df = df.with_columns(
        (pl.col("is_number") & (pl.col("digits") != "") & (pl.col("point") > MAX_AMOUNT_DIGITS)).alias("too_big"),
        # below 1e-40 nothing reaches the stored value or the 38 decimals of its rounding
        ((pl.col("digits") == "") | (pl.col("point") < -40)).alias("is_zero"),
        pl.col("point").clip(-40, 20).alias("p"),
    )
    df = df.with_columns(
        pl.when(pl.col("p") > 0)
        .then(pl.col("digits").str.slice(0, pl.col("p")).str.pad_end(pl.col("p"), "0"))
        .otherwise(pl.lit("0"))
        .alias("int_part"),
        pl.when(pl.col("p") >= 0)
        .then(pl.col("digits").str.slice(pl.col("p")))
        .otherwise(pl.col("digits").str.pad_start(pl.col("digits").str.len_chars().cast(pl.Int64) - pl.col("p"), "0"))
        .alias("fraction"),
    )
    fraction = pl.col("fraction")
    df = df.with_columns(
        fraction.str.slice(0, 18).str.pad_end(18, "0").alias("f18"),
        fraction.str.slice(18, 20).str.pad_end(20, "0").alias("t20"),
        fraction.str.slice(38, 1).str.pad_end(1, "0").alias("guard"),
        fraction.str.slice(39).str.contains("[1-9]").alias("sticky"),
    )
    half = "5" + "0" * 19
    odd = ["1", "3", "5", "7", "9"]
    t20, guard, sticky = pl.col("t20"), pl.col("guard"), pl.col("sticky")
    beyond_half = (t20 > half) | ((t20 == half) & ((guard != "0") | sticky))
    exact_half = (t20 == half) & (guard == "0") & ~sticky
    up = beyond_half | (exact_half & pl.col("f18").str.slice(17, 1).is_in(odd))
    # the residual's own half-even rounding at 1e-38 (rounding the residual before or after taking
    # 1e-18 off is the same: 1e-18 is an even number of 1e-38 units)
    tail_up = (guard > "5") | ((guard == "5") & (sticky | t20.str.slice(19, 1).is_in(odd)))
    negative = pl.col("sign") == "-"
    df = df.with_columns(
        ((pl.col("int_part") + pl.col("f18")).cast(pl.Int128) + up.cast(pl.Int128)).alias("units"),
        (t20.cast(pl.Int128) + tail_up.cast(pl.Int128) - pl.when(up).then(_TAIL).otherwise(0).cast(pl.Int128))
        .alias("residual"),
    )
    df = df.with_columns(
        (pl.col("too_big") | (pl.col("units") >= _UNITS_LIMIT)).alias("too_big"),
        pl.when(pl.col("is_zero")).then(pl.lit(0, pl.Int128)).otherwise(pl.col("units")).alias("units"),
        pl.when(pl.col("is_zero")).then(pl.lit(0, pl.Int128)).otherwise(pl.col("residual")).alias("residual"),
    )
    readable = pl.col("is_number") & ~pl.col("too_big")
    units = pl.col("units").cast(pl.String).str.pad_start(19, "0")
    amount_text = pl.concat_str(
        pl.when(negative).then(pl.lit("-")).otherwise(pl.lit("")),
        units.str.slice(0, units.str.len_chars() - 18),
        pl.lit("."),
        units.str.slice(-18),
    )
    residual_sign = pl.when(negative != (pl.col("residual") < 0)).then(pl.lit("-")).otherwise(pl.lit(""))
    rounding_text = pl.concat_str(
        residual_sign,
        pl.lit("0." + "0" * 18),
        pl.col("residual").abs().cast(pl.String).str.pad_start(20, "0"),
    )
    return df.select(
        "value",
        pl.when(readable).then(amount_text.cast(MONEY, strict=False)).alias("amount"),
        pl.when(readable).then(rounding_text.cast(ROUNDING, strict=False)).alias("rounding"),
        pl.when(~pl.col("is_number")).then(pl.lit(NOT_A_NUMBER))
        .when(pl.col("too_big")).then(pl.lit(OUT_OF_RANGE))
        .alias("problem"),
    )


def exact_sum(frame: pl.DataFrame, terms: list[tuple[int, str]]) -> pl.Series:
    """Σ sign·term over EXACT struct columns of `frame` (null terms count as 0), as EXACT structs of
    the exact totals: amounts and roundings are summed apart, then the rounding is brought back
    within ±0.5e-18 (half-even) by moving whole 1e-18 units onto the amount. A term too large for the
    sum to be sure to be below the per-line limit (|term| ≥ 1e12 / number of terms) makes the sum
    out of range. Each step is its own column, so no term is worked out twice."""
    limit = pl.lit(10**MAX_AMOUNT_DIGITS // len(terms), dtype=MONEY)
    df = frame.select(
        pl.any_horizontal([pl.col(t).struct.field("amount").abs().fill_null(0) >= limit for _, t in terms])
        .alias("too_big"),
        *[pl.col(t).struct.field("amount").fill_null(0).alias(f"a{i}") for i, (_, t) in enumerate(terms)],
        *[pl.col(t).struct.field("rounding").fill_null(0).alias(f"r{i}") for i, (_, t) in enumerate(terms)],
    )
    amount, rounding = pl.lit(0, dtype=MONEY), pl.lit(0, dtype=ROUNDING)
    for i, (sign, _) in enumerate(terms):
        # zeroed where too big, so the sum itself never overflows
        a = pl.when(pl.col("too_big")).then(pl.lit(0, MONEY)).otherwise(pl.col(f"a{i}"))
        amount = amount + a if sign > 0 else amount - a
        rounding = rounding + pl.col(f"r{i}") if sign > 0 else rounding - pl.col(f"r{i}")
    df = df.with_columns(amount.alias("amount"), rounding.alias("rounding"))
    for _ in range(len(terms) - 1):  # |Σ rounding| ≤ n·0.5e-18: n − 1 moves bring it within ±0.5e-18
        df = _carry(df)
    return df.select(
        pl.struct(
            pl.when(~pl.col("too_big")).then(pl.col("amount")).alias("amount"),
            pl.when(~pl.col("too_big")).then(pl.col("rounding")).alias("rounding"),
            pl.when(pl.col("too_big")).then(pl.lit(OUT_OF_RANGE)).alias("problem"),
        )
    ).to_series()


def _carry(df: pl.DataFrame) -> pl.DataFrame:
    """Moves one 1e-18 unit between rounding and amount where the rounding is beyond ±0.5e-18, or at
    exactly ±0.5e-18 with an odd last digit (half-even)."""
    unit = decimal_lit("1e-18", MONEY)
    unit_r = decimal_lit("1e-18", ROUNDING)
    half = decimal_lit("5e-19", ROUNDING)
    amount, rounding = pl.col("amount"), pl.col("rounding")
    odd = amount.cast(pl.String).str.slice(-1).is_in(["1", "3", "5", "7", "9"])
    df = df.with_columns(
        pl.when((rounding > half) | ((rounding == half) & odd)).then(1)
        .when((rounding < -half) | ((rounding == -half) & odd)).then(-1)
        .otherwise(0)
        .alias("step")
    )
    step = pl.col("step")
    return df.with_columns(
        pl.when(step == 1).then(amount + unit).when(step == -1).then(amount - unit).otherwise(amount).alias("amount"),
        pl.when(step == 1).then(rounding - unit_r).when(step == -1).then(rounding + unit_r).otherwise(rounding)
        .alias("rounding"),
    )
