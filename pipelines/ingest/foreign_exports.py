"""Cost exports that are not the format of the folder they landed in, told apart by their headers.

A file with a header no bill parser reads would be refused as "missing required FOCUS column(s)",
which says nothing of what it is. Azure's actual/amortized cost exports (EA and MCA), GCP's billing
export, and AWS CUR each have columns no FOCUS file has; a file with them is refused naming the
export and what to land instead (docs/ingest/focus.md, "Other exports").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ForeignExport:
    name: str                       # "an Azure EA cost export"
    matches: Callable[[set[str]], bool]  # the header's names, lower-cased
    remedy: str                     # what to land instead


def _all(*names: str) -> Callable[[set[str]], bool]:
    wanted = {n.lower() for n in names}
    return lambda header: wanted <= header


def _any_prefix(*prefixes: str) -> Callable[[set[str]], bool]:
    return lambda header: any(h.startswith(p) for h in header for p in prefixes)


_AZURE_FOCUS = ("export FOCUS from Cost Management (Exports → New export → 'Cost and usage (FOCUS)') "
                "and land that under bills/focus/")
_AWS = ("land it under bills/aws_cur/, where it is read as CUR, or export FOCUS 1.0 from AWS Data Exports "
        "for bills/focus/")

KNOWN: list[ForeignExport] = [
    # EA: `BillingCurrencyCode` / `AccountOwnerId`; MCA: camelCase `billingCurrency`, `billingProfileId`
    ForeignExport("an Azure EA cost export",
                  lambda h: _all("CostInBillingCurrency", "MeterCategory")(h)
                  and bool(h & {"billingcurrencycode", "accountownerid"}), _AZURE_FOCUS),
    ForeignExport("an Azure MCA cost export",
                  lambda h: _all("CostInBillingCurrency", "MeterCategory")(h) and "billingprofileid" in h,
                  _AZURE_FOCUS),
    ForeignExport("an Azure cost export",
                  lambda h: "metercategory" in h and bool(h & {"costinbillingcurrency", "pretaxcost", "cost"})
                  and bool(h & {"subscriptionid", "subscriptionguid", "subscriptionname"}), _AZURE_FOCUS),
    ForeignExport("a GCP billing export",
                  lambda h: "cost" in h and bool(h & {"usage_start_time", "usage_start_time_utc"})
                  and _any_prefix("service.", "sku.", "billing_account_id")(h),
                  "export FOCUS from BigQuery (the FOCUS view over the billing export) and land that under "
                  "bills/focus/"),
    ForeignExport("a GCP billing file export",
                  _all("Line Item", "Start Time", "End Time", "Cost", "Currency"),
                  "export FOCUS from BigQuery (the FOCUS view over the billing export) and land that under "
                  "bills/focus/"),
    ForeignExport("an AWS legacy CUR export", _any_prefix("lineitem/"), _AWS),
    ForeignExport("an AWS CUR 2.0 export", _any_prefix("line_item_"), _AWS),
]

FOCUS_MARKS = {"chargeperiodstart", "billedcost", "effectivecost", "chargecategory"}


def foreign_export(header: list[str]) -> str | None:
    """`this is an Azure EA cost export, not FOCUS; export FOCUS …` for a header that is a known
    other export's and no FOCUS file's, else None."""
    names = {h.strip().lower() for h in header}
    if FOCUS_MARKS <= names:
        return None
    for export in KNOWN:
        if export.matches(names):
            return f"this is {export.name}, not FOCUS; {export.remedy}"
    return None


def focus_in_cur_folder(header: list[str]) -> str | None:
    """For the CUR parser: a FOCUS file landed under bills/aws_cur/."""
    names = {h.strip().lower() for h in header}
    if FOCUS_MARKS <= names:
        return "this is a FOCUS file, not AWS CUR; land it under bills/focus/"
    return None
