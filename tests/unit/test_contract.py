"""The contracts' own checks (models/contract.py) refuse the same rows for the same reasons as pandera
validating the same contract: every contract, on rows that break each check alone and together."""

from __future__ import annotations

import random
from datetime import date, datetime
from decimal import Decimal

import pandera.polars as pa
import polars as pl
import pytest

from models import landing, staging
from models.contract import Contract
from pipelines.ingest.common import split_by_contract

CONTRACTS = [c for m in (landing, staging) for c in vars(m).values() if isinstance(c, Contract)]

# values of each type that pass and break the contracts' checks: bounds, nulls, NaN, the far future
CANDIDATES: dict[pl.DataType, list] = {
    pl.String: ["Usage", "", "Used", "step", "x", None, "Unused", "Credit"],
    pl.Float64: [0.5, -1.0, 0.0, 1.0, 100.0, 101.0, 9.3e18, float("nan"), None, 2.0],
    pl.Int32: [0, -1, 1, 64, 65, 255, 256, None],
    pl.Int64: [0, -5, 7, None],
    pl.Boolean: [True, None, False],
    pl.Date: [date(2024, 1, 1), None],
    landing.TS: [datetime(2024, 1, 1), None, datetime(2100, 1, 1), datetime(2023, 12, 31, 23, 59, 30),
                 datetime(2024, 1, 1, 0, 1)],
    landing.MONEY: [Decimal("1.5"), Decimal("0"), Decimal("-2.25"), None],
    landing.ROUNDING: [Decimal("1e-19"), Decimal("6e-19"), None, Decimal("-5e-19")],
}
ROWS = 60


def _frame(contract: Contract) -> pl.DataFrame:
    """ROWS rows in which every column takes each of its candidates (in turn, from its own place in
    the list, then at random), so values meet in many combinations; plus the columns the row checks read."""
    columns = {name: spec.dtype for name, spec in contract.columns.items()}
    columns.setdefault("submit_ts", landing.TS)
    data = {}
    for i, (name, dtype) in enumerate(columns.items()):
        values = CANDIDATES[dtype]
        rng = random.Random(name)
        picks = [values[(row + i) % len(values)] if row < len(values) else rng.choice(values) for row in range(ROWS)]
        data[name] = pl.Series(name, picks, dtype=dtype)
    return pl.DataFrame(data)


def _pandera_reasons(contract: Contract, frame: pl.DataFrame) -> dict[int, list[str]]:
    """Row -> reasons, worded from pandera's failure cases."""
    try:
        contract.to_pandera().validate(frame, lazy=True)
    except pa.errors.SchemaErrors as err:
        cases = err.failure_cases
    else:
        return {}
    assert cases.filter(pl.col("index").is_null()).height == 0, cases
    worded = cases.select(
        "index",
        pl.when(pl.col("schema_context") == "Column")
        .then(pl.format("{} {} failed (value {})", "column", "check", pl.col("failure_case").fill_null("null")))
        .otherwise(pl.col("check")).alias("reason"),
    )
    found: dict[int, list[str]] = {}
    for index, reason in worded.iter_rows():
        found.setdefault(index, [])
        if reason not in found[index]:
            found[index].append(reason)
    return found


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_contract_refuses_what_pandera_refuses(contract: Contract):
    frame = _frame(contract)
    expected = _pandera_reasons(contract, frame)
    assert expected, "the frame breaks some check"
    staged, rejects = split_by_contract(
        frame.with_row_index("_row", offset=0), contract, source="test", file="f.csv", staged_columns=["_row"],
        raw_columns=["_row"], row_ref=pl.format("{}", pl.col("_row")),
    )
    got = {int(ref): reason.split("; ") for ref, reason in rejects.select("row_ref", "reason").iter_rows()}
    assert got == expected
    assert sorted(staged["_row"].to_list() + list(got)) == list(range(ROWS))


def test_checks_of_a_parser_come_first_and_spare_the_contract():
    """A row a parser's own check refuses is not also held to the contract (its typed values are
    what failed to cast), as before the contract ran."""
    frame = pl.DataFrame({"hostname": ["", "a"], "gpu_count": pl.Series([None, 99], dtype=pl.Int32),
                          "raw": ["x", "y"]})
    _, rejects = split_by_contract(
        frame, landing.InventoryNode, source="t", file="f", staged_columns=["hostname"], raw_columns=["raw"],
        row_ref=pl.lit("r"), checks=[(pl.col("raw") == "x", pl.lit("raw 'x' is not a number"))],
    )
    assert rejects["reason"].to_list() == ["raw 'x' is not a number",
                                           "gpu_count less_than_or_equal_to(64) failed (value 99)"]


def test_a_column_of_another_type_is_a_parser_bug():
    frame = pl.DataFrame({"hostname": ["a"], "gpu_count": [1]})  # Int64, not Int32
    with pytest.raises(RuntimeError, match="gpu_count' is Int64, not Int32"):
        split_by_contract(frame, landing.InventoryNode, source="t", file="f", staged_columns=["hostname"],
                          raw_columns=["hostname"], row_ref=pl.lit("r"))


def test_rows_without_cast_failures_are_held_to_the_contract_even_with_a_null_list():
    """A parser's `_errors` list may be null for a row (no cast was tried): that row is held to the
    contract like a row whose list is empty."""
    frame = pl.DataFrame({"hostname": ["a", "b", "c"], "gpu_count": pl.Series([99, 99, 1], dtype=pl.Int32),
                          "_errors": pl.Series([None, [], ["gpu_count 'x' is not a number"]],
                                               dtype=pl.List(pl.String))})
    staged, rejects = split_by_contract(
        frame, landing.InventoryNode, source="t", file="f", staged_columns=["hostname"], raw_columns=["hostname"],
        row_ref=pl.col("hostname"),
    )
    assert dict(rejects.select("row_ref", "reason").iter_rows()) == {
        "a": "gpu_count less_than_or_equal_to(64) failed (value 99)",
        "b": "gpu_count less_than_or_equal_to(64) failed (value 99)",
        "c": "gpu_count 'x' is not a number",
    }
    assert staged.height == 0
