"""Bill files whose money was lost or misread while the day looked complete (issue 22): bytes that
are not UTF-8, a column named twice, another provider's export in bills/focus/, currencies that are
not ISO 4217. Each is refused or quarantined by name, with whatever money could be read."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.ingest import aws_cur, focus
from tests.support.memory_db import memory_db

START, END = "2026-11-02T00:00:00Z", "2026-11-02T01:00:00Z"
CUR_HEADER = ("identity/LineItemId,lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UsageEndDate,"
              "lineItem/ProductCode,lineItem/ResourceId,lineItem/CurrencyCode,lineItem/UnblendedCost\n")


def _cur_line(n: int, cost: str, resource: str = "i-1", currency: str = "USD") -> str:
    return f"l{n},Usage,{START},{END},AmazonEC2,{resource},{currency},{cost}\n"


def test_a_cur_line_with_a_latin1_byte_is_quarantined_with_its_money(tmp_path):
    path = tmp_path / "cur.csv"
    path.write_bytes(CUR_HEADER.encode() + _cur_line(1, "21").encode()
                     + _cur_line(2, "19", resource="caf\u00e9-node").encode("latin-1"))
    parsed = aws_cur.parse(memory_db(), path, "bills/aws_cur/cur.csv")
    assert parsed.rows["billed_cost"].to_list() == [Decimal(21)]
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert reject["row_ref"] == "row 2"
    assert reject["reason"].startswith("lineItem/ResourceId is not UTF-8: byte 0xE9 at byte 3 of its value")
    assert (reject["billed_cost"], reject["effective_cost"], reject["billing_currency"]) == (19, 19, "USD")
    assert reject["day"] == date(2026, 11, 2)


def test_a_parquet_string_that_is_not_utf8_quarantines_its_row_with_its_money(tmp_path):
    """Parquet strings are UTF-8 by spec, but pyarrow stores what a broken writer gives it, and
    polars crashed on such a string later (a panic, not an error). The row is mended and quarantined
    like a CSV one, its payload the whole record."""
    path = tmp_path / "bad.parquet"
    bad = pa.array([b"ok", b"caf\xe9"], type=pa.binary()).cast(pa.string(), safe=False)
    table = pa.table({"ChargePeriodStart": [START] * 2, "ChargePeriodEnd": [END] * 2,
                      "ChargeCategory": ["Usage"] * 2, "BilledCost": ["1", "2"], "EffectiveCost": ["1", "2"],
                      "ResourceName": bad, "Unread": bad})
    pq.write_table(table, path)
    parsed = focus.parse(memory_db(), path, "bills/focus/bad.parquet")
    assert parsed.rows["resource_name"].to_list() == ["ok"]
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert reject["row_ref"] == "row 2"
    assert reject["reason"] == "ResourceName is not UTF-8: byte 0xE9 at byte 3 of its value (read as U+FFFD)"
    assert (reject["billed_cost"], reject["billing_currency"]) == (2, "USD")
    assert '"Unread":"caf\ufffd"' in reject["payload"]


@pytest.mark.parametrize("header,message", [
    ("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ResourceName,EffectiveCost,BilledCost",
     "file bills/focus/d.csv: column EffectiveCost appears twice (columns 5 and 7)"),
    ("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,effectivecost,x,y",
     "file bills/focus/d.csv: column effectivecost appears twice (as EffectiveCost) (columns 5 and 6)"),
])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_column_named_twice_refuses_the_file_by_name(tmp_path, header, message, suffix):
    names = header.split(",")
    values = [START, END, "Usage", "31.50", "31.50", "x", "3000", "3000"]
    path = tmp_path / f"d{suffix}"
    if suffix == ".csv":
        path.write_text(header + "\n" + ",".join(values) + "\n")
    else:
        table = pa.Table.from_arrays([pa.array([v]) for v in values], names=names)
        pq.write_table(table, path)
    parsed = focus.parse(memory_db(), path, f"bills/focus/d{suffix}")
    assert parsed.rows.height == 0
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert reject["row_ref"] == "file"
    assert reject["reason"].replace(".parquet", ".csv").startswith(message)


def test_a_cur_column_named_twice_refuses_the_file(tmp_path):
    path = tmp_path / "cur.csv"
    path.write_text(CUR_HEADER.strip() + ",lineItem/UnblendedCost\n" + _cur_line(1, "31.5").strip() + ",3000\n")
    parsed = aws_cur.parse(memory_db(), path, "bills/aws_cur/cur.csv")
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert reject["row_ref"] == "file"
    assert "column lineItem/UnblendedCost appears twice (columns 8 and 9)" in reject["reason"]


AZURE_EA = ("InvoiceSectionName,AccountName,AccountOwnerId,SubscriptionId,SubscriptionName,ResourceGroup,"
            "ResourceLocation,Date,ProductName,MeterCategory,MeterSubCategory,MeterId,MeterName,MeterRegion,"
            "UnitOfMeasure,Quantity,EffectivePrice,CostInBillingCurrency,CostCenter,ConsumedService,ResourceId,"
            "Tags,OfferId,AdditionalInfo,ServiceInfo1,ServiceInfo2,ResourceName,ReservationId,ReservationName,"
            "UnitPrice,ProductOrderId,ProductOrderName,Term,PublisherType,PublisherName,ChargeType,Frequency,"
            "PricingModel,AvailabilityZone,BillingAccountId,BillingAccountName,BillingCurrencyCode,"
            "BillingPeriodStartDate,BillingPeriodEndDate,BillingProfileId,BillingProfileName,InvoiceSectionId,"
            "IsAzureCreditEligible,PartNumber,PayGPrice,PlanName,ServiceFamily")
AZURE_MCA = ("invoiceId,previousInvoiceId,billingAccountId,billingAccountName,billingProfileId,billingProfileName,"
             "invoiceSectionId,invoiceSectionName,partnerName,resellerName,date,serviceFamily,meterCategory,"
             "meterSubCategory,meterName,quantity,costInBillingCurrency,costInPricingCurrency,costInUsd,"
             "billingCurrency,subscriptionId,subscriptionName,resourceId,tags")
GCP = ("billing_account_id,service.id,service.description,sku.id,sku.description,usage_start_time,usage_end_time,"
       "project.id,cost,currency,usage.amount")


@pytest.mark.parametrize("header,name", [
    (AZURE_EA, "an Azure EA cost export"), (AZURE_MCA, "an Azure MCA cost export"), (GCP, "a GCP billing export"),
    (CUR_HEADER.strip(), "an AWS legacy CUR export"),
])
def test_known_non_focus_exports_are_refused_by_name(tmp_path, header, name):
    path = tmp_path / "export.csv"
    path.write_text(header + "\n" + ",".join("1" for _ in header.split(",")) + "\n")
    (reject,) = focus.parse(memory_db(), path, "bills/focus/export.csv").rejects.iter_rows(named=True)
    assert reject["row_ref"] == "file"
    assert reject["reason"].startswith(f"this is {name}, not FOCUS; ")
    assert "bills/" in reject["reason"]  # says where the right export goes


def test_a_focus_file_in_the_cur_folder_says_so(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text(f"ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost\n{START},{END},Usage,1,1\n")
    (reject,) = aws_cur.parse(memory_db(), path, "bills/aws_cur/f.csv").rejects.iter_rows(named=True)
    assert reject["reason"] == "this is a FOCUS file, not AWS CUR; land it under bills/focus/"


def test_currencies_that_are_not_iso_4217_are_quarantined_with_their_money(tmp_path):
    path = tmp_path / "c.csv"
    rows = [("USD", "1"), ("usd", "2"), ("dollars", "3"), ("XYZ", "4"), ("EUR", "5")]
    path.write_text("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency\n"
                    + "".join(f"{START},{END},Usage,{c},{c},{cur}\n" for cur, c in rows))
    parsed = focus.parse(memory_db(), path, "bills/focus/c.csv")
    assert parsed.rows["billing_currency"].to_list() == ["USD", "EUR"]
    rejects = {r["row_ref"]: r for r in parsed.rejects.iter_rows(named=True)}
    assert set(rejects) == {"row 2", "row 3", "row 4"}
    assert rejects["row 2"]["reason"].startswith("BillingCurrency 'usd' is not an ISO 4217 currency code")
    assert rejects["row 3"]["reason"].startswith("BillingCurrency 'dollars' is not an ISO 4217 currency code")
    # kept, upper-cased: never a currency of its own beside USD, never added to another
    assert [(r["billing_currency"], r["billed_cost"]) for r in rejects.values()] == [
        ("USD", 2), ("DOLLARS", 3), ("XYZ", 4)]


def test_a_cur_currency_that_is_not_iso_4217_names_the_cur_column(tmp_path):
    path = tmp_path / "cur.csv"
    path.write_text(CUR_HEADER + _cur_line(1, "7", currency="XYZ"))
    (reject,) = aws_cur.parse(memory_db(), path, "bills/aws_cur/cur.csv").rejects.iter_rows(named=True)
    assert reject["reason"].startswith("lineItem/CurrencyCode 'XYZ' is not an ISO 4217 currency code")
    assert (reject["billing_currency"], reject["billed_cost"]) == ("XYZ", 7)


def test_quarantined_rows_of_a_file_without_billingcurrency_take_and_count_the_default(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost\n"
                    f"{START},{END},Usage,5,5\n{START},{END},Usage,abc,6\n{START},{END},Bogus,7,7\n")
    parsed = focus.parse(memory_db(), path, "bills/focus/n.csv", default_currency="NOK")
    assert parsed.rows["billing_currency"].to_list() == ["NOK"]
    assert parsed.rejects["billing_currency"].to_list() == ["NOK", "NOK"]
    assert parsed.rejects["effective_cost"].to_list() == [6, 7]
    assert parsed.defaulted == {"billing_currency": {"NOK": 3}}  # was 1: only the staged row
