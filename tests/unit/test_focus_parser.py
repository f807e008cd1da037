import csv
import json
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from pipelines.ingest import focus
from tests.support.memory_db import memory_db


def _csv_sum(path: Path, column: str) -> Decimal:
    """The bill total computed straight from the file, independent of the parser."""
    with path.open(newline="") as fh:
        return sum((Decimal(r[column]) for r in csv.DictReader(fh) if r[column] not in ("", "NULL")), Decimal(0))


def test_finops_sample_ingests_whole(real):
    path = real / "focus" / "focus_1_0_sample_1000.csv"
    parsed = focus.parse(memory_db(), path, "bills/focus/sample.csv")
    assert parsed.rejects.height == 0
    assert parsed.rows.height == 1000
    totals = parsed.rows.select(pl.col("effective_cost").sum(), pl.col("billed_cost").sum()).row(0)
    assert totals == (_csv_sum(path, "EffectiveCost"), _csv_sum(path, "BilledCost"))
    # README: Usage 997, Adjustment 2, Credit 1; `Usage-based` spelled 7 times, normalised
    counts = dict(parsed.rows.group_by("charge_category").len().iter_rows())
    assert counts == {"Usage": 997, "Adjustment": 2, "Credit": 1}
    assert set(parsed.rows["charge_frequency"].drop_nulls()) <= {"Usage-Based", "One-Time", "Recurring"}
    # space-separated timestamps read as UTC
    first = parsed.rows.sort("_row").row(0, named=True)
    assert str(first["charge_period_start"]).startswith("2024-09")
    # a tag key with a stray leading space is trimmed
    keys = {k for t in parsed.rows["tags"].drop_nulls() for k in json.loads(t)}
    assert "org" in keys and " org" not in keys


def test_spec_unused_commitment_scenario(real):
    parsed = focus.parse(memory_db(), real / "focus" / "spec_examples" / "commitment_discount_usage_scenario_3.csv", "s3.csv")
    assert parsed.rejects.height == 0
    unused = parsed.rows.filter(pl.col("commitment_discount_status") == "Unused")
    assert unused["effective_cost"].to_list() == [Decimal("0.25")]
    assert parsed.rows["effective_cost"].sum() == Decimal("1.00")


HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ResourceId,Tags\n"


def test_bad_rows_are_quarantined_with_their_money(tmp_path):
    path = tmp_path / "b.csv"
    path.write_text(
        HEADER
        + '2026-11-01T00:00:00Z,2026-11-01T01:00:00Z,usage,10.5,10.5,i-1,"{""node"": ""n1""}"\n'
        + "2026-11-01T00:00:00Z,2026-11-01T01:00:00Z,Usage,abc,3.25,i-2,\n"
        + "2026-13-01T00:00:00Z,2026-11-01T01:00:00Z,Usage,1,1,i-3,\n"
        + "2026-11-01T02:00:00Z,2026-11-01T01:00:00Z,Usage,2,2,i-4,\n"
        + "2026-11-01T00:00:00Z,2026-11-01T01:00:00Z,Refund,4,4,i-5,\n"
        + "2026-11-01T00:00:00Z,2026-11-01T01:00:00Z,Usage,5,5,i-6,{not json\n"
    )
    parsed = focus.parse(memory_db(), path, "bills/focus/b.csv")
    assert parsed.rows["resource_id"].to_list() == ["i-1"]
    assert parsed.rows["charge_category"].to_list() == ["Usage"]  # case normalised
    rejects = {r["row_ref"]: r for r in parsed.rejects.iter_rows(named=True)}
    assert set(rejects) == {"row 2", "row 3", "row 4", "row 5", "row 6"}
    assert "BilledCost 'abc' is not a number" in rejects["row 2"]["reason"]
    assert rejects["row 2"]["effective_cost"] == Decimal("3.25")  # the money that did parse is kept
    assert "ChargePeriodStart '2026-13-01T00:00:00Z' is not a timestamp" in rejects["row 3"]["reason"]
    assert "ChargePeriodEnd must not be before ChargePeriodStart" in rejects["row 4"]["reason"]
    assert "charge_category" in rejects["row 5"]["reason"] and "Refund" in rejects["row 5"]["reason"]
    assert "Tags '{not json' is not a JSON object" in rejects["row 6"]["reason"]
    assert all(r["file"] == "bills/focus/b.csv" for r in rejects.values())
    assert json.loads(rejects["row 2"]["payload"])["BilledCost"] == "abc"
    # every row is either staged or quarantined, and the money adds up
    staged = parsed.rows["effective_cost"].sum()
    quarantined = sum(r["effective_cost"] for r in rejects.values())
    assert staged + quarantined == Decimal("10.5") + Decimal("3.25") + 1 + 2 + 4 + 5


def test_missing_required_column_rejects_the_file(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("ChargePeriodStart,BilledCost\n2026-11-01,1\n")
    parsed = focus.parse(memory_db(), path, "x.csv")
    assert parsed.rows.height == 0
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert reject["row_ref"] == "file"
    assert "ChargePeriodEnd" in reject["reason"] and "EffectiveCost" in reject["reason"]


def test_parquet_and_gzip_read_like_csv(tmp_path):
    text = HEADER + '2026-11-01 00:00:00,2026-11-01 01:00:00,Usage,1.0000000001,NULL,i-1,\n'
    (tmp_path / "a.csv").write_text(text)
    import gzip

    (tmp_path / "a.csv.gz").write_bytes(gzip.compress(text.encode()))
    pl.read_csv(tmp_path / "a.csv", infer_schema=False).write_parquet(tmp_path / "a.parquet")
    results = [focus.parse(memory_db(), tmp_path / n, n) for n in ("a.csv", "a.csv.gz", "a.parquet")]
    # EffectiveCost NULL is a missing mandatory value: quarantined, BilledCost kept
    for r in results:
        assert r.rows.height == 0
        assert r.rejects["billed_cost"].to_list() == [Decimal("1.0000000001")]


@pytest.mark.parametrize(
    "name, effective, billed, unused",
    [
        # (file, total EffectiveCost, total BilledCost, EffectiveCost of the Unused row): read off the spec's CSVs
        ("commitment_discount_usage_scenario_1.csv", "1.00", "0.00", None),        # 100 % used
        ("commitment_discount_usage_scenario_2.csv", "1.00", "0.00", "1.00"),      # 0 % used: all Unused
        ("commitment_discount_usage_scenario_3.csv", "1.00", "0.00", "0.25"),      # 75 % used
        ("commitment_discount_usage_scenario_4.csv", "1.50", "0.50", None),        # overage on a Standard row
        ("commitment_discount_purchase_scenario_1.csv", "0.00", "8760.00", None),  # all-upfront purchase
    ],
)
def test_spec_commitment_scenarios(real, name, effective, billed, unused):
    parsed = focus.parse(memory_db(), real / "focus" / "spec_examples" / name, name)
    assert parsed.rejects.height == 0
    assert parsed.rows["effective_cost"].sum() == Decimal(effective)
    assert parsed.rows["billed_cost"].sum() == Decimal(billed)
    got_unused = parsed.rows.filter(pl.col("commitment_discount_status") == "Unused")["effective_cost"].to_list()
    assert got_unused == ([Decimal(unused)] if unused else [])
