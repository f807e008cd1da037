"""`gpuledger query`'s outputs: a table that fits the terminal with money to the cent; CSV, JSON and
Parquet exact, with nested values and intervals as text (they ended in polars tracebacks)."""

import io
import json
from contextlib import redirect_stdout
from decimal import Decimal

import duckdb
import polars as pl
import pytest

from pipelines.cli.console import print_table, write_csv, write_json, write_parquet
from pipelines.cli.query import _fetch

MONEY = "5268.870096220027956992"


@pytest.fixture
def frame():
    con = duckdb.connect()
    return _fetch(con, f"""SELECT DATE '2026-11-01' AS day, 'USD' AS billing_currency,
        {MONEY}::DECIMAL(38,18) AS effective_cost, 0.429::DECIMAL(18,3) AS gpus,
        ['a.csv', 'b.csv'] AS files, {{'reason': 'x', 'n': 2}} AS detail,
        INTERVAL '14 months 2 days 1.5 seconds' AS waited, 0.374::DOUBLE AS mfu""", 10)


def _table(frame, width):
    out = io.StringIO()
    with redirect_stdout(out):
        print_table(frame, width=width)
    return out.getvalue()


def test_a_table_shows_money_to_the_cent_and_fits_the_width_naming_what_it_left_out(frame):
    wide = _table(frame, 200)
    assert "5,268.87" in wide and "0.429" in wide and "1 year 2 months 2 days 00:00:01.5" in wide
    assert '["a.csv", "b.csv"]' in wide and "more column" not in wide
    narrow = _table(frame, 80)
    assert max(len(line) for line in narrow.splitlines()[:-1]) <= 80
    assert narrow.splitlines()[-1].startswith("… ") and "not shown at 80 characters" in narrow
    assert "5,268.87" in narrow


def test_csv_json_and_parquet_are_exact_and_hold_nested_values_as_json(frame, tmp_path):
    csv = write_csv(frame).splitlines()
    assert csv[0] == "day,billing_currency,effective_cost,gpus,files,detail,waited,mfu"
    row = pl.read_csv(io.StringIO(write_csv(frame)), infer_schema=False).row(0, named=True)
    assert row["effective_cost"] == MONEY and json.loads(row["files"]) == ["a.csv", "b.csv"]
    assert json.loads(row["detail"]) == {"reason": "x", "n": 2} and row["waited"] == "1 year 2 months 2 days 00:00:01.5"
    (obj,) = json.loads(write_json(frame))
    assert obj["effective_cost"] == MONEY and obj["day"] == "2026-11-01" and obj["gpus"] == "0.429"
    assert obj["files"] == ["a.csv", "b.csv"] and obj["mfu"] == pytest.approx(0.374)
    write_parquet(frame, tmp_path / "r.parquet")
    back = pl.read_parquet(tmp_path / "r.parquet")
    assert back["effective_cost"][0] == Decimal(MONEY) and back["files"][0].to_list() == ["a.csv", "b.csv"]
