"""Exact amounts (pipelines.ingest.money) against Python's own decimal: every notation exporters write,
stored half-even at 1e-18, with stored + rounding = the text's exact value."""

import random
import struct
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation, localcontext

import polars as pl
import pytest

from pipelines.ingest.money import NOT_A_NUMBER, exact_money, exact_sum, parse_amounts

UNIT, TINY, HALF = Decimal("1e-18"), Decimal("1e-38"), Decimal("0.5e-18")


def _truth(text: str) -> tuple[Decimal, Decimal] | None:
    """(stored, rounding) by Python's decimal, straight from the text; None when it is no number."""
    with localcontext(prec=500):
        try:
            exact = Decimal(text.strip())
        except InvalidOperation:
            return None
        if not exact.is_finite():
            return None
        stored = exact.quantize(UNIT, rounding=ROUND_HALF_EVEN)
        return stored, (exact - stored).quantize(TINY, rounding=ROUND_HALF_EVEN)


def _parsed(texts: list[str]) -> list[dict]:
    return parse_amounts(pl.Series(texts, dtype=pl.String)).to_list()


# by hand: (text, stored, rounding)
HAND = [
    ("12.5", "12.5", "0"),
    ("-3", "-3", "0"),
    (".5", "0.5", "0"),
    ("+4", "4", "0"),
    ("1.2E-7", "0.00000012", "0"),
    ("5e+3", "5000", "0"),
    ("0.0007458096045417008", "0.000745809604541701", "-2e-19"),  # AWS float64 text, 19 decimals
    ("3.3333333333333335", "3.3333333333333335", "0"),
    ("-0.00000001", "-0.00000001", "0"),
    ("0.0000000000000000005", "0", "5e-19"),  # a tie: to the even unit, 0
    ("0.0000000000000000015", "2e-18", "-5e-19"),  # a tie: to the even unit, 2e-18
    ("-2.5E-18", "-2e-18", "-5e-19"),
    ("1.5e-38", "0", "2e-38"),  # the rounding itself rounded half-even at 1e-38
    ("00000000000000000000012.5", "12.5", "0"),  # leading zeros past 20 digits
    ("999999999999.999999999999999999", "999999999999.999999999999999999", "0"),  # the largest amount read
]


@pytest.mark.parametrize("text,stored,rounding", HAND)
def test_by_hand(text, stored, rounding):
    (got,) = _parsed([text])
    assert (got["amount"], got["rounding"], got["problem"]) == (Decimal(stored), Decimal(rounding), None)
    assert _truth(text) == (Decimal(stored), Decimal(rounding))


def test_every_notation_agrees_with_python_decimal():
    rng = random.Random(5)
    texts = []
    for _ in range(4000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 45)))
        cut = rng.randint(0, len(digits))
        text = rng.choice(["", "-", "+"]) + digits[:cut] + ("." if rng.random() < 0.8 else "") + digits[cut:]
        if rng.random() < 0.4:
            text += rng.choice("eE") + str(rng.randint(-45, 19))
        texts.append(text)
    texts += [repr(rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-25, 10)) for _ in range(4000)]
    for text, got in zip(texts, _parsed(texts)):
        truth = _truth(text)
        if truth is None or abs(truth[0]) >= Decimal("1e12"):
            assert got["amount"] is None and got["problem"] is not None, text
        else:
            assert (got["amount"], got["rounding"]) == truth, text
            assert abs(got["rounding"]) <= HALF, text


@pytest.mark.parametrize("text", ["abc", "1,5", "NaN", "inf", "-Infinity", "1E", "e5", ".", "1.2.3", "--1"])
def test_text_that_is_no_number(text):
    (got,) = _parsed([text])
    assert got == {"amount": None, "rounding": None, "problem": f"'{text}' {NOT_A_NUMBER}"}


@pytest.mark.parametrize("text", ["1e12", "-1000000000000", "999999999999.9999999999999999995", "6e19", "1e20", "1e999999"])
def test_out_of_decimal_38_18_range(text):
    (got,) = _parsed([text])
    assert got["amount"] is None and "out of range" in got["problem"] and text in got["problem"]


def test_blank_and_null_spellings_are_no_amount():
    parsed = parse_amounts(pl.Series(["", "  ", "NULL", "null", None, "1"], dtype=pl.String))
    fields = parsed.struct.unnest()
    assert fields["amount"].to_list() == [None] * 5 + [Decimal(1)]
    assert fields["rounding"].null_count() == 5 and fields["problem"].null_count() == 6


def _hard_floats() -> list[float]:
    rng = random.Random(11)
    floats = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(20000)]
    floats += [rng.random() * 10 ** rng.randint(-22, 12) for _ in range(20000)]
    floats += [0.0007458096045417008, 1.2e-7, 3.3333333333333335, -1e-08, 5e-324, 1e16, 0.1 + 0.2, 1e-5, 123456789.123]
    return [f for f in floats if f == f and abs(f) != float("inf")]


def test_polars_float_text_is_the_value_python_repr_writes():
    """Parquet DOUBLE amounts are read through polars' Float64 → String: it must be the shortest
    round-trip decimal, the same value Python's repr(float) writes (the formatting may differ:
    `1e-05` against `0.00001`)."""
    floats = _hard_floats()
    texts = pl.Series(floats, dtype=pl.Float64).cast(pl.String).to_list()
    assert all(Decimal(text) == Decimal(repr(f)) for f, text in zip(floats, texts))


def test_doubles_are_read_through_their_round_trip_text():
    floats = [f for f in _hard_floats() if abs(f) < 1e11]
    for f, got in zip(floats, parse_amounts(pl.Series(floats, dtype=pl.Float64)).to_list()):
        assert (got["amount"], got["rounding"]) == _truth(repr(f)), repr(f)


def test_exact_sum_keeps_the_exact_total_within_half_a_unit():
    rng = random.Random(3)
    a = [rng.choice(["2.5e-19", "-2.5e-19", "5e-19", "0.0000000000000000015", repr(rng.random()), "7", ""])
         for _ in range(3000)]
    b = [rng.choice(["2.5e-19", "-7.5e-19", "5e-19", repr(rng.random() * 1e-5), "1.0000000000000000005", ""])
         for _ in range(3000)]
    parts = pl.DataFrame({"a": a, "b": b}).select(exact_money(pl.col("a")).alias("a"), exact_money(pl.col("b")).alias("b"))
    for x, y, got in zip(a, b, exact_sum(parts, [(1, "a"), (-1, "b")]).to_list()):
        with localcontext(prec=500):
            exact = Decimal(x or 0) - Decimal(y or 0)
            assert got["amount"] == exact.quantize(UNIT, rounding=ROUND_HALF_EVEN), (x, y)
            assert abs(got["rounding"]) <= HALF
            # the terms' roundings are kept to 1e-38, so the total is exact to 1e-38 too
            assert abs(got["amount"] + got["rounding"] - exact) <= 2 * TINY, (x, y)


def test_exact_sum_of_terms_too_large_is_out_of_range():
    parts = pl.DataFrame({"a": ["600000000000"], "b": ["-1"]}).select(
        exact_money(pl.col("a")).alias("a"), exact_money(pl.col("b")).alias("b"))
    (got,) = exact_sum(parts, [(1, "a"), (1, "b")]).to_list()
    assert got["amount"] is None and "out of range" in got["problem"]


def test_a_sum_of_the_documented_number_of_lines_at_the_limit_fits_decimal_38_18():
    """docs/landing.md: a line is below 1e12, so any sum of up to 1e8 lines fits the DECIMAL(38,18)
    that DuckDB sums it in (two lines of 6e19, under the old 1e20 limit, failed the day's SUM)."""
    import duckdb

    from pipelines.ingest.money import MAX_AMOUNT_DIGITS, MAX_SUMMED_LINES

    largest = "9" * MAX_AMOUNT_DIGITS + "." + "9" * 18
    (got,) = parse_amounts(pl.Series([largest, "1e12"])).to_list()[:1]
    assert got["amount"] == Decimal(largest)
    with duckdb.connect() as con:
        total, kind = con.sql(f"SELECT sum(x)::VARCHAR, typeof(sum(x)) FROM (SELECT {largest}::DECIMAL(38, 18) AS x "
                              f"FROM range({MAX_SUMMED_LINES}))").fetchall()[0]
        assert kind == "DECIMAL(38,18)"
        with localcontext(prec=60):
            assert Decimal(total) == Decimal(largest) * MAX_SUMMED_LINES
            assert -Decimal(total) == Decimal(largest) * -MAX_SUMMED_LINES
        with pytest.raises(duckdb.OutOfRangeException):  # the old limit: two lines of 6e19
            con.sql("SELECT sum(x) FROM (SELECT 6e19::DECIMAL(38, 18) AS x FROM range(2))").fetchall()
