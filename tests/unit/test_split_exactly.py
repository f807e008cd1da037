"""The one exact split (sql/macros/10_money.sql), on given rows: pieces sum to the group exactly,
each is within one unit of its exact proportion, ties go by piece key, the sign is kept, and a group
with nothing to split by has no pieces."""

from fractions import Fraction

from hypothesis import given as hypothesis_given
from hypothesis import settings, strategies as st

from tests.support.sql_steps import given, warehouse

import polars as pl

SCHEMA = {"group_key": pl.String, "piece_key": pl.String, "units": pl.String, "weight": pl.Int64}


def _split(rows):
    con = warehouse()
    given(con, "split_input", [{**r, "units": str(r["units"])} for r in rows], SCHEMA)
    con.execute("ALTER TABLE split_input ALTER units TYPE HUGEINT")   # money in units of 1e-18
    out = con.sql("FROM split_exactly('split_input') ORDER BY group_key, piece_key").fetchall()
    con.close()
    return {(g, p): int(u) for g, p, u in out}


def test_given_rows_give_the_expected_pieces():
    rows = [
        {"group_key": "g", "piece_key": "a", "units": 10, "weight": 1},
        {"group_key": "g", "piece_key": "b", "units": 10, "weight": 2},       # 10 by 1:2 = 3.33 / 6.67
        {"group_key": "h", "piece_key": "a", "units": -7, "weight": 1},
        {"group_key": "h", "piece_key": "b", "units": -7, "weight": 1},       # -3.5 each: the tie goes to "a"
        {"group_key": "z", "piece_key": "a", "units": 5, "weight": 0},        # nothing to split by: no pieces
    ]
    assert _split(rows) == {("g", "a"): 3, ("g", "b"): 7, ("h", "a"): -4, ("h", "b"): -3}


@settings(max_examples=40, deadline=None, derandomize=True)
@hypothesis_given(units=st.integers(-10**30, 10**30),
                  weights=st.lists(st.integers(0, 10**12), min_size=1, max_size=8).filter(lambda w: sum(w) > 0))
def test_pieces_sum_exactly_and_stay_within_a_unit(units, weights):
    rows = [{"group_key": "g", "piece_key": f"p{i:02d}", "units": units, "weight": w} for i, w in enumerate(weights)]
    got = _split(rows)
    assert sum(got.values()) == units
    total = sum(weights)
    for i, w in enumerate(weights):
        assert abs(got[("g", f"p{i:02d}")] - Fraction(units * w, total)) < 1
