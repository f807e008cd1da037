"""AWS CUR → FOCUS on ingest: the real legacy sample, and synthetic legacy / CUR 2.0 files that carry
every commitment line type, in CSV, CSV.gz and Parquet."""

import csv
import gzip
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.ingest import aws_cur
from tests.support.memory_db import memory_db

# ---------------------------------------------------------------------------------------------------
# the real sample (shared/data/real/cur): legacy headers, 1,281 rows, Usage + Tax, no NetUnblendedCost

REAL_CUR = "cur/aws_cur_legacy_sample_anonymized.csv"
# Computed once outside the pipeline, straight from the file:
#   python3 -c "import csv, decimal; rows = list(csv.DictReader(open('aws_cur_legacy_sample_anonymized.csv')));
#               print(sum(decimal.Decimal(r['lineItem/UnblendedCost']) for r in rows))"
# -> 1.68230869740. The file has only Usage and Tax rows and no lineItem/NetUnblendedCost column, so
# EffectiveCost (ELSE UnblendedCost) and BilledCost (COALESCE(Net, Unblended)) both equal it.
REAL_EFFECTIVE_TOTAL = Decimal("1.68230869740")
REAL_BILLED_TOTAL = Decimal("1.68230869740")
# LineItemType -> FOCUS ChargeCategory, by hand, for the types the sample holds
REAL_CATEGORY = {"Usage": "Usage", "Tax": "Tax"}


def _dec(value: str) -> Decimal:
    return Decimal(value) if value not in ("", "NULL") else Decimal(0)


def _reference_effective(r: dict) -> Decimal:
    """The EffectiveCost rule of reference/billing-focus-cur-opencost.md §2.1, in plain Decimal."""
    t = r["lineItem/LineItemType"]
    g = lambda c: _dec(r.get(c, ""))  # noqa: E731
    if t == "SavingsPlanCoveredUsage":
        return g("savingsPlan/SavingsPlanEffectiveCost")
    if t == "SavingsPlanRecurringFee":
        return g("savingsPlan/TotalCommitmentToDate") - g("savingsPlan/UsedCommitment")
    if t in ("SavingsPlanNegation", "SavingsPlanUpfrontFee"):
        return Decimal(0)
    if t == "DiscountedUsage":
        return g("reservation/EffectiveCost")
    if t == "RIFee":
        return g("reservation/UnusedAmortizedUpfrontFeeForBillingPeriod") + g("reservation/UnusedRecurringFee")
    return g("lineItem/UnblendedCost")


def test_real_legacy_sample_converts_whole(real):
    path = real / REAL_CUR
    parsed = aws_cur.parse(memory_db(), path, "bills/aws_cur/sample.csv")
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert parsed.rejects.height == 0
    assert parsed.rows.height == len(rows) == 1281
    assert set(parsed.rows["source"]) == {"aws_cur"}

    expected_categories = Counter(REAL_CATEGORY[r["lineItem/LineItemType"]] for r in rows)
    assert expected_categories == {"Usage": 1269, "Tax": 12}
    assert dict(parsed.rows.group_by("charge_category").len().iter_rows()) == expected_categories

    effective = sum((_reference_effective(r) for r in rows), Decimal(0))
    billed = sum((_dec(r.get("lineItem/NetUnblendedCost") or r["lineItem/UnblendedCost"]) for r in rows), Decimal(0))
    assert (effective, billed) == (REAL_EFFECTIVE_TOTAL, REAL_BILLED_TOTAL)
    totals = parsed.rows.select(pl.col("effective_cost").sum(), pl.col("billed_cost").sum()).row(0)
    assert totals == (REAL_EFFECTIVE_TOTAL, REAL_BILLED_TOTAL)

    # identity/LineItemId repeats across daily intervals (388 ids, 1,281 rows): the line id adds the interval
    assert parsed.rows["line_id"].n_unique() == 1281
    first = parsed.rows.sort("_row").row(0, named=True)
    assert first["line_id"] == rows[0]["identity/LineItemId"] + "/" + rows[0]["identity/TimeInterval"]
    assert str(first["charge_period_start"]) == "2023-11-01 00:00:00"
    assert first["billing_account_id"] == "123412340534" and first["billing_currency"] == "USD"
    s3 = parsed.rows.filter(pl.col("service_name") == "Amazon Simple Storage Service")
    assert set(s3["service_category"]) == {"Storage"}
    assert parsed.rows["tags"].null_count() == 1281  # the export has no resourceTags columns

    # what the FOCUS export carries per line, as focus_converters names it: the invoicing entity issues the
    # invoice, the legal entity (seller of record) publishes; ContractedCost of Usage and Tax is UnblendedCost
    by_row = {r["_row"]: r for r in parsed.rows.iter_rows(named=True)}
    for n, r in enumerate(rows, start=1):
        got = by_row[n]
        assert got["invoice_issuer_name"] == r["bill/InvoicingEntity"], n
        assert got["publisher_name"] == r["lineItem/LegalEntity"], n
        assert got["pricing_currency"] == (r["pricing/currency"] or None), n
        assert got["contracted_cost"] == Decimal(r["lineItem/UnblendedCost"]), n
        assert got["list_cost"] == Decimal(r["pricing/publicOnDemandCost"]), n
    assert parsed.rows["contracted_cost"].sum() == REAL_EFFECTIVE_TOTAL
    assert parsed.rows["billing_account_name"].null_count() == 1281   # legacy CUR has no account names


# ---------------------------------------------------------------------------------------------------
# synthetic files: one row per line type, legacy and CUR 2.0 headers

HEADERS = {  # concept -> (legacy, CUR 2.0 / Athena)
    "id": ("identity/LineItemId", "identity_line_item_id"),
    "interval": ("identity/TimeInterval", "identity_time_interval"),
    "payer": ("bill/PayerAccountId", "bill_payer_account_id"),
    "payer_name": ("bill/PayerAccountName", "bill_payer_account_name"),
    "invoicing": ("bill/InvoicingEntity", "bill_invoicing_entity"),
    "invoice": ("bill/InvoiceId", "bill_invoice_id"),
    "bp_start": ("bill/BillingPeriodStartDate", "bill_billing_period_start_date"),
    "bp_end": ("bill/BillingPeriodEndDate", "bill_billing_period_end_date"),
    "account": ("lineItem/UsageAccountId", "line_item_usage_account_id"),
    "account_name": ("lineItem/UsageAccountName", "line_item_usage_account_name"),
    "legal": ("lineItem/LegalEntity", "line_item_legal_entity"),
    "type": ("lineItem/LineItemType", "line_item_line_item_type"),
    "start": ("lineItem/UsageStartDate", "line_item_usage_start_date"),
    "end": ("lineItem/UsageEndDate", "line_item_usage_end_date"),
    "product": ("lineItem/ProductCode", "line_item_product_code"),
    "resource": ("lineItem/ResourceId", "line_item_resource_id"),
    "amount": ("lineItem/UsageAmount", "line_item_usage_amount"),
    "currency": ("lineItem/CurrencyCode", "line_item_currency_code"),
    "unblended": ("lineItem/UnblendedCost", "line_item_unblended_cost"),
    "net": ("lineItem/NetUnblendedCost", "line_item_net_unblended_cost"),
    "list": ("pricing/publicOnDemandCost", "pricing_public_on_demand_cost"),
    "pricing_currency": ("pricing/currency", "pricing_currency"),
    "region": ("product/regionCode", "product_region_code"),
    "ri_arn": ("reservation/ReservationARN", "reservation_reservation_a_r_n"),
    "ri_eff": ("reservation/EffectiveCost", "reservation_effective_cost"),
    "ri_unused_upfront": ("reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
                          "reservation_unused_amortized_upfront_fee_for_billing_period"),
    "ri_unused_recurring": ("reservation/UnusedRecurringFee", "reservation_unused_recurring_fee"),
    "sp_arn": ("savingsPlan/SavingsPlanARN", "savings_plan_savings_plan_a_r_n"),
    "sp_eff": ("savingsPlan/SavingsPlanEffectiveCost", "savings_plan_savings_plan_effective_cost"),
    "tcd": ("savingsPlan/TotalCommitmentToDate", "savings_plan_total_commitment_to_date"),
    "used": ("savingsPlan/UsedCommitment", "savings_plan_used_commitment"),
}
MONEY_CONCEPTS = ["unblended", "net", "list", "ri_eff", "ri_unused_upfront", "ri_unused_recurring",
                  "sp_eff", "tcd", "used"]
SP = "arn:aws:savingsplans::111122223333:savingsplan/sp-0f1e2d"
RI = "arn:aws:ec2:us-east-1:111122223333:reserved-instances/ri-77aa"
BASE = {
    "interval": "2026-11-01T00:00:00Z/2026-11-01T01:00:00Z", "payer": "111122223333", "invoice": "INV-1",
    "payer_name": "acme-payer", "invoicing": "Amazon Web Services, Inc.", "account_name": "ml-training",
    "legal": "Amazon Web Services, Inc.", "pricing_currency": "USD",
    "bp_start": "2026-11-01T00:00:00Z", "bp_end": "2026-12-01T00:00:00Z", "account": "444455556666",
    "start": "2026-11-01T00:00:00Z", "end": "2026-11-01T01:00:00Z", "product": "AmazonEC2", "amount": "1.0",
    "currency": "USD", "region": "us-east-1",
}
# id -> (CUR fields, tags, expected (ChargeCategory, EffectiveCost, BilledCost, Status, CommitmentDiscountId))
ROWS = {
    "sp-covered": ({"type": "SavingsPlanCoveredUsage", "resource": "i-0a1b2c3d4e", "unblended": "98.32",
                    "sp_eff": "60.125", "sp_arn": SP, "list": "98.32"},
                   {"project": "llm-7b", "team": 'ml "core"'}, ("Usage", "60.125", "98.32", "Used", SP)),
    "sp-negation": ({"type": "SavingsPlanNegation", "resource": "i-0a1b2c3d4e", "unblended": "-98.32", "sp_arn": SP},
                    {"project": "llm-7b", "team": ""}, ("Usage", "0", "-98.32", None, None)),
    "sp-fee": ({"type": "SavingsPlanRecurringFee", "product": "ComputeSavingsPlans", "resource": SP,
                "unblended": "75.00", "tcd": "75.00", "used": "60.125", "sp_arn": SP},
               {}, ("Purchase", "14.875", "75.00", "Unused", SP)),
    "sp-fee-used": ({"type": "SavingsPlanRecurringFee", "product": "ComputeSavingsPlans", "resource": SP,
                     "unblended": "75.00", "tcd": "75.00", "used": "75.00", "sp_arn": SP},
                    {}, ("Purchase", "0", "75.00", None, SP)),
    "ri-covered": ({"type": "DiscountedUsage", "resource": "i-0f9e8d7c6b", "unblended": "0", "ri_eff": "20.50",
                    "ri_arn": RI, "list": "32.77"}, {"project": "llm-70b"}, ("Usage", "20.50", "0", "Used", RI)),
    "ri-fee": ({"type": "RIFee", "unblended": "25.00", "ri_unused_upfront": "1.25", "ri_unused_recurring": "3.75",
                "ri_arn": RI}, {}, ("Purchase", "5.00", "25.00", "Unused", RI)),
    "ri-upfront": ({"type": "Fee", "unblended": "1000.00", "ri_arn": RI}, {}, ("Purchase", "0", "1000.00", None, RI)),
    "credit": ({"type": "Credit", "product": "AmazonS3", "unblended": "-10.00"}, {},
               ("Credit", "-10.00", "-10.00", None, None)),
    "refund": ({"type": "Refund", "unblended": "-4.20"}, {}, ("Usage", "-4.20", "-4.20", None, None)),
    "tax": ({"type": "Tax", "product": "AmazonS3", "unblended": "7.77"}, {},
            ("Tax", "7.77", "7.77", None, None)),
    "net-usage": ({"type": "Usage", "resource": "i-0123abcd", "unblended": "10.00", "net": "9.00", "list": "12.00"},
                  {"project": "llm-7b"}, ("Usage", "10.00", "9.00", None, None)),
    "unknown": ({"type": "MysteryCharge", "unblended": "1.00"}, {}, None),
    "broken": ({"type": "Usage", "resource": "i-0123abcd", "unblended": "1.50", "net": "1,5"}, {}, None),
}


def _cur_rows(flavour: int) -> tuple[list[str], list[dict]]:
    """(header, rows) of the synthetic CUR: flavour 0 = legacy, 1 = CUR 2.0. Legacy tags are
    resourceTags/user:* columns; CUR 2.0 tags are the resource_tags map (JSON text) for `project` and
    an Athena-style resource_tags_user_team column for `team`."""
    header = [names[flavour] for names in HEADERS.values()]
    header += ["resourceTags/user:project", "resourceTags/user:team", "resourceTags/aws:createdBy"] if flavour == 0 \
        else ["resource_tags", "resource_tags_user_team"]
    out = []
    for line_id, (fields, tags, _) in ROWS.items():
        values = {"id": line_id, **BASE, **fields}
        row = {HEADERS[k][flavour]: values.get(k, "") for k in HEADERS}
        if flavour == 0:
            row |= {"resourceTags/user:project": tags.get("project", ""),
                    "resourceTags/user:team": tags.get("team", ""),
                    "resourceTags/aws:createdBy": "IAMUser:x"}
        else:
            row |= {"resource_tags": json.dumps({"user_project": tags["project"], "aws_createdBy": "IAMUser:x"})
                    if "project" in tags else "",
                    "resource_tags_user_team": tags.get("team", "")}
        out.append(row)
    return header, out


def _write_csv(path: Path, flavour: int) -> Path:
    header, rows = _cur_rows(flavour)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, header)
        writer.writeheader()
        writer.writerows(rows)
    return path


def _write_parquet(path: Path) -> Path:
    """CUR 2.0 as AWS writes Parquet: doubles for money, zoned timestamps, a MAP of tags. The row with
    an unreadable amount cannot exist in typed Parquet and is left out."""
    header, rows = _cur_rows(1)
    rows = [r for r in rows if r["identity_line_item_id"] != "broken"]
    money = {HEADERS[k][1] for k in MONEY_CONCEPTS} | {HEADERS["amount"][1]}
    times = {HEADERS[k][1] for k in ("start", "end", "bp_start", "bp_end")}
    arrays = {}
    for col in header:
        values = [r[col] or None for r in rows]
        if col in money:
            arrays[col] = pa.array([float(v) if v else None for v in values], pa.float64())
        elif col in times:
            arrays[col] = pa.array([None if v is None else v.replace("Z", "+00:00") for v in values]).cast(
                pa.timestamp("us", tz="UTC"))
        elif col == "resource_tags":
            arrays[col] = pa.array([list(json.loads(v).items()) if v else None for v in values],
                                   pa.map_(pa.string(), pa.string()))
        else:
            arrays[col] = pa.array(values, pa.string())
    pq.write_table(pa.table(arrays), path)
    return path


@pytest.mark.parametrize("flavour", [0, 1], ids=["legacy", "cur2"])
def test_synthetic_commitment_lines(tmp_path, flavour):
    path = _write_csv(tmp_path / "cur.csv", flavour)
    parsed = aws_cur.parse(memory_db(), path, "bills/aws_cur/cur.csv")
    got = {r["line_id"].split("/")[0]: r for r in parsed.rows.iter_rows(named=True)}
    expected = {k: v[2] for k, v in ROWS.items() if v[2] is not None}
    assert set(got) == set(expected)
    for line_id, (category, effective, billed, status, commitment) in expected.items():
        row = got[line_id]
        assert (row["charge_category"], row["effective_cost"], row["billed_cost"]) == (
            category, Decimal(effective), Decimal(billed)), line_id
        assert (row["commitment_discount_status"], row["commitment_discount_id"]) == (status, commitment), line_id

    # the unused commitment rows stand on the commitment, as FOCUS puts them
    unused = {k: r["resource_id"] for k, r in got.items() if r["commitment_discount_status"] == "Unused"}
    assert unused == {"sp-fee": SP, "ri-fee": RI}
    # a covered hour: billed on demand and negated; effective once, at the plan's rate; its plan is
    # paid through the recurring fee (used 60.125 + unused 14.875 = 75.00 billed)
    sp_effective = sum(got[k]["effective_cost"] for k in ("sp-covered", "sp-negation", "sp-fee"))
    assert sp_effective == Decimal("75.00") == got["sp-fee"]["billed_cost"]

    assert json.loads(got["sp-covered"]["tags"]) == {"project": "llm-7b", "team": 'ml "core"'}
    assert json.loads(got["sp-negation"]["tags"]) == {"project": "llm-7b"}  # the empty team is dropped
    assert json.loads(got["ri-covered"]["tags"]) == {"project": "llm-70b"}
    assert got["credit"]["tags"] is None
    assert got["net-usage"]["list_cost"] == Decimal("12.00")
    # ContractedCost: the cost before any commitment (UnblendedCost; on-demand for RI-covered usage; a
    # plan's negation of covered usage is the plan's doing, so 0); a credit's List and Contracted are its Billed
    contracted = {k: r["contracted_cost"] for k, r in got.items()}
    assert contracted == {"sp-covered": Decimal("98.32"), "sp-negation": 0, "sp-fee": Decimal("75.00"),
                          "sp-fee-used": Decimal("75.00"), "ri-covered": Decimal("32.77"), "ri-fee": Decimal("25.00"),
                          "ri-upfront": Decimal("1000.00"), "credit": Decimal("-10.00"), "refund": Decimal("-4.20"),
                          "tax": Decimal("7.77"), "net-usage": Decimal("10.00")}
    assert got["credit"]["list_cost"] == Decimal("-10.00")
    names = {(r["billing_account_name"], r["sub_account_name"], r["invoice_issuer_name"], r["publisher_name"],
              r["pricing_currency"]) for r in got.values()}
    assert names == {("acme-payer", "ml-training", "Amazon Web Services, Inc.", "Amazon Web Services, Inc.", "USD")}
    assert (got["sp-covered"]["resource_type"], got["sp-covered"]["service_category"]) == ("instance", "Compute")
    assert got["sp-covered"]["commitment_discount_type"] == "Savings Plan"
    assert got["ri-covered"]["commitment_discount_category"] == "Usage"
    assert got["credit"]["service_category"] == "Storage"
    assert got["tax"]["pricing_quantity"] == 1.0 and got["tax"]["consumed_quantity"] is None
    assert got["sp-fee"]["consumed_quantity"] is None  # Purchase rows consume nothing
    assert str(got["sp-covered"]["charge_period_end"]) == "2026-11-01 01:00:00"

    rejects = {json.loads(r["payload"])["x_LineItemId"].split("/")[0]: r for r in parsed.rejects.iter_rows(named=True)}
    assert set(rejects) == {"unknown", "broken"}
    assert "MysteryCharge" in rejects["unknown"]["reason"] and "charge_category" in rejects["unknown"]["reason"]
    assert rejects["unknown"]["effective_cost"] == Decimal("1.00")
    net = HEADERS["net"][flavour]
    assert f"BilledCost '{net}=1,5' is not a number" in rejects["broken"]["reason"]
    assert rejects["broken"]["effective_cost"] == Decimal("1.50")  # its other money is kept
    assert rejects["broken"]["billed_cost"] is None
    assert json.loads(rejects["broken"]["payload"])[net] == "1,5"  # the CUR row itself is in the payload
    assert all(r["source"] == "aws_cur" and r["file"] == "bills/aws_cur/cur.csv" for r in rejects.values())
    # nothing is lost: staged + quarantined EffectiveCost is the whole file
    all_effective = sum(Decimal(v[2][1]) for v in ROWS.values() if v[2]) + Decimal("1.00") + Decimal("1.50")
    assert parsed.rows["effective_cost"].sum() + parsed.rejects["effective_cost"].sum() == all_effective


def _comparable(parsed) -> tuple[pl.DataFrame, pl.DataFrame]:
    rows = parsed.rows.drop("_file").sort("line_id")
    rejects = parsed.rejects.drop("file", "payload").sort("row_ref")
    return rows, rejects


@pytest.mark.parametrize("flavour", [0, 1], ids=["legacy", "cur2"])
def test_csv_gz_reads_as_csv(tmp_path, flavour):
    path = _write_csv(tmp_path / "cur.csv", flavour)
    gz = tmp_path / "cur.csv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    plain, zipped = aws_cur.parse(memory_db(), path, "a.csv"), aws_cur.parse(memory_db(), gz, "a.csv.gz")
    assert plain.rows.height == 11 and plain.rejects.height == 2
    for a, b in zip(_comparable(plain), _comparable(zipped)):
        assert a.equals(b)


def test_parquet_reads_as_csv(tmp_path):
    csv_parsed = aws_cur.parse(memory_db(), _write_csv(tmp_path / "cur.csv", 1), "a.csv")
    pq_parsed = aws_cur.parse(memory_db(), _write_parquet(tmp_path / "cur.parquet"), "a.parquet")
    assert pq_parsed.rows.height == 11 and pq_parsed.rejects["reason"].str.contains("MysteryCharge").to_list() == [True]
    # the same rows, and within them the same exact money, times and tags; only the row numbers differ
    # (the broken row is not in the Parquet file)
    a, b = (p.rows.drop("_file", "_row").sort("line_id") for p in (csv_parsed, pq_parsed))
    assert a.equals(b)
    assert json.loads(pq_parsed.rows.filter(pl.col("line_id").str.starts_with("sp-covered"))["tags"].item()) == {
        "project": "llm-7b", "team": 'ml "core"'}


def test_not_a_cur_file_is_rejected_whole(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("ChargePeriodStart,BilledCost\n2026-11-01,1\n")
    parsed = aws_cur.parse(memory_db(), path, "bills/aws_cur/x.csv")
    assert parsed.rows.height == 0
    assert parsed.rejects["row_ref"].to_list() == ["file"]
    assert "lineItem/UnblendedCost" in parsed.rejects["reason"].item()

    path.write_text("line_item_unblended_cost,line_item_line_item_type\n1,Usage\n")
    reason = aws_cur.parse(memory_db(), path, "bills/aws_cur/x.csv").rejects["reason"].item()
    assert "missing required CUR column(s): lineItem/UsageStartDate, lineItem/UsageEndDate" in reason


def test_malformed_tag_map_quarantines_only_its_row(tmp_path):
    header, rows = _cur_rows(1)
    rows = [r for r in rows if r["identity_line_item_id"] in ("sp-covered", "ri-covered")]
    rows[1]["resource_tags"] = "{user_project: llm-70b"
    path = tmp_path / "cur.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, header)
        writer.writeheader()
        writer.writerows(rows)
    parsed = aws_cur.parse(memory_db(), path, "cur.csv")
    assert json.loads(parsed.rows["tags"].item()) == {"project": "llm-7b", "team": 'ml "core"'}
    assert "Tags 'resource_tags={user_project: llm-70b' is not a JSON object" in parsed.rejects["reason"].item()
