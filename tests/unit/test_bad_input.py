"""Bad input, tried on purpose: every fault gets a message naming file and row, lands in
ops.quarantine, and never takes the rest of the file (or the run) with it."""

import gzip
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal

import pytest

import polars as pl

from pipelines.ingest import dcgm, focus
from tests.support.memory_db import memory_db

HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ResourceId,Tags\n"


def _good(h: int, cost: str) -> str:
    """An hourly line of hour h costing `cost`."""
    return f'2026-11-02T{h:02d}:00:00Z,2026-11-02T{h + 1:02d}:00:00Z,Usage,{cost},{cost},i-{h},"{{""project"": ""p""}}"\n'


def test_a_broken_quote_costs_one_line(tmp_path):
    path = tmp_path / "b.csv"
    path.write_text(HEADER + _good(1, "1.5") + '2026-11-02T02:00:00Z,2026-11-02T03:00:00Z,Usage,2,2,i-2,"{""broken\n'
                    + _good(3, "3.25") + _good(4, "4"))
    parsed = focus.parse(memory_db(), path, "bills/focus/b.csv")
    assert parsed.rows["resource_id"].to_list() == ["i-1", "i-3", "i-4"]
    assert parsed.rows["effective_cost"].sum() == Decimal("8.75")
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert reject["row_ref"] == "line 3" and reject["reason"] == "unreadable CSV line: unbalanced quote"
    assert reject["file"] == "bills/focus/b.csv" and "broken" in reject["payload"]


@pytest.mark.parametrize("name", ["e.csv", "e.csv.gz"])
def test_bytes_that_are_not_utf8_quarantine_their_line_with_its_money(tmp_path, name):
    """A latin-1 byte in a text cell: the line is read with U+FFFD for it and quarantined naming the
    column and byte, its amounts, currency and day kept (it was "not UTF-8" with no money at all)."""
    path = tmp_path / name
    bad = _good(2, "19").replace("i-2", "caf\u00e9").encode("latin-1")  # é as one latin-1 byte
    data = HEADER.encode() + _good(1, "21").encode() + bad + _good(3, "3").encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    parsed = focus.parse(memory_db(), path, f"bills/focus/{name}", default_currency="EUR")
    assert parsed.rows["resource_id"].to_list() == ["i-1", "i-3"]
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert reject["row_ref"] == "row 2"
    assert reject["reason"] == "ResourceId is not UTF-8: byte 0xE9 at byte 3 of its value (read as U+FFFD)"
    assert (reject["effective_cost"], reject["billed_cost"], reject["billing_currency"]) == (19, 19, "EUR")
    assert reject["day"] == date(2026, 11, 2) and "caf\ufffd" in reject["payload"]
    assert parsed.defaulted == {"billing_currency": {"EUR": 3}}


def test_a_truncated_parquet_file_is_one_quarantine_row(tmp_path):
    frame = pl.DataFrame({"ChargePeriodStart": ["2026-11-02T00:00:00Z"] * 50, "ChargePeriodEnd": ["2026-11-02T01:00:00Z"] * 50,
                          "ChargeCategory": ["Usage"] * 50, "BilledCost": ["1"] * 50, "EffectiveCost": ["1"] * 50})
    whole = tmp_path / "whole.parquet"
    frame.write_parquet(whole)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    parsed = focus.parse(memory_db(), cut, "bills/focus/cut.parquet")
    assert parsed.rows.height == 0
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert reject["row_ref"] == "file" and reject["reason"].startswith("unreadable file:")
    telemetry = dcgm.parse(cut, "telemetry/dcgm/cut.parquet")
    assert telemetry.rejects["row_ref"].to_list() == ["file"]


def test_nan_and_infinite_money_are_quarantined(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text(HEADER + _good(1, "NaN") + _good(2, "inf") + _good(3, "-Infinity") + _good(4, "4"))
    parsed = focus.parse(memory_db(), path, "n.csv")
    assert parsed.rows["resource_id"].to_list() == ["i-4"]
    reasons = dict(parsed.rejects.select("row_ref", "reason").iter_rows())
    assert reasons["row 1"].startswith("BilledCost 'NaN' is not a number")
    assert reasons["row 2"].startswith("BilledCost 'inf' is not a number")
    assert reasons["row 3"].startswith("BilledCost '-Infinity' is not a number")


def test_a_repeated_line_id_is_quarantined_with_the_row_it_repeats(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,x_LineItemId\n"
                    "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,1,1,a\n"
                    "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,2,2,b\n"
                    "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,1,1,a\n")
    parsed = focus.parse(memory_db(), path, "d.csv")
    assert parsed.rows["line_id"].to_list() == ["a", "b"]
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert (reject["row_ref"], reject["reason"], reject["effective_cost"]) == ("row 3", "x_LineItemId 'a' repeats row 1", Decimal("1"))


def test_times_in_the_future_are_quarantined(tmp_path):

    from pipelines.ingest import runs
    from pipelines.ingest import slurm
    from pipelines.lib.config import ClusterConfig

    bill = tmp_path / "f.csv"
    bill.write_text(HEADER + "2099-01-01T00:00:00Z,2099-01-01T01:00:00Z,Usage,5,5,i-9,\n" + _good(1, "1"))
    parsed = focus.parse(memory_db(), bill, "f.csv")
    assert parsed.rejects.select("row_ref", "reason").rows() == [("row 1", "ChargePeriodStart must not be in the future")]
    assert parsed.rejects["effective_cost"].to_list() == [Decimal("5")]
    sacct = tmp_path / "s.psv"
    sacct.write_text("JobIDRaw|JobID|State|Submit|Start|End|AllocTRES|NodeList\n"
                     "1|1|COMPLETED|2099-01-01T00:00:00|2099-01-01T00:00:00|2099-01-01T01:00:00|gres/gpu=1|n1\n")
    assert slurm.parse(sacct, "s.psv", "c", ClusterConfig()).rejects["reason"].to_list() == [
        "Submit, Start and End must not be in the future"]
    events = tmp_path / "r.jsonl"
    events.write_text('{"event":"step","run_id":"r","job_id":"1","step":1,"tokens":5,"ts":"2099-01-01T00:00:00Z"}\n')
    assert runs.parse(memory_db(), events, "r.jsonl").rejects["reason"].to_list() == ["ts must not be in the future"]


def test_amounts_finer_than_1e18_are_kept_with_their_rounding(tmp_path):
    texts = ["1.0000000000000000001", "1.23456789E-12", "2.5000000000000000000000", "1E-18",
             "0.0000000000000000005", "0.0000000000000000015", "-0.0000000000000000025"]
    path = tmp_path / "p.csv"
    path.write_text(HEADER + "".join(_good(h, t) for h, t in enumerate(texts, start=1)))
    parsed = focus.parse(memory_db(), path, "p.csv")
    assert parsed.rejects.height == 0
    rows = parsed.rows.sort("_row")
    for text, stored, rounding in zip(texts, rows["billed_cost"], rows["billed_cost_rounding"]):
        exact = Decimal(text)  # Python's decimal, from the file's text
        assert stored == exact.quantize(Decimal("1e-18"), rounding=ROUND_HALF_EVEN), text
        assert stored + rounding == exact, text
        assert abs(rounding) <= Decimal("0.5e-18"), text
    # ties go to the even unit, by hand: 0.5e-18 -> 0, 1.5e-18 -> 2e-18, -2.5e-18 -> -2e-18
    assert rows["billed_cost"].to_list()[4:] == [Decimal(0), Decimal("2e-18"), Decimal("-2e-18")]
    assert rows["billed_cost_rounding"].to_list()[4:] == [Decimal("5e-19"), Decimal("-5e-19"), Decimal("-5e-19")]


def test_amounts_beyond_the_per_line_limit_are_quarantined(tmp_path):
    """The per-line limit is 1e12 (docs/landing.md, "Amounts"): 1e8 such lines still add up within
    DECIMAL(38,18). 6e19 fits DECIMAL(38,18) but two of them do not fit a day's SUM."""
    path = tmp_path / "r.csv"
    path.write_text(HEADER + _good(1, "1e12") + _good(2, "-1234567890123")
                    + _good(3, "999999999999.9999999999999999995") + _good(4, "999999999999.5") + _good(5, "6e19"))
    parsed = focus.parse(memory_db(), path, "r.csv")
    assert parsed.rows["resource_id"].to_list() == ["i-4"]
    reasons = dict(parsed.rejects.select("row_ref", "reason").iter_rows())
    assert reasons["row 1"].startswith("BilledCost '1e12' is out of range")
    assert reasons["row 2"].startswith("BilledCost '-1234567890123' is out of range")
    # rounds (half-even) to 1e12, one unit past the largest amount read
    assert reasons["row 3"].startswith("BilledCost '999999999999.9999999999999999995' is out of range")
    assert reasons["row 5"].startswith("BilledCost '6e19' is out of range")
    assert parsed.rows["billed_cost"].to_list() == [Decimal("999999999999.5")]
