"""FOCUS 1.2 bills of two billing accounts, each delivered the way a month-to-date export (AWS Data Exports,
Azure/GCP FOCUS exports) delivers them: twice a day a new delivery of the billing period lands beside the
earlier ones, in the account's own export folder,

    bills/focus/<export>/<YYYYMMDD>-<YYYYMMDD>/<delivery id>/<export>-00001.csv
    bills/focus/<export>/<YYYYMMDD>-<YYYYMMDD>/<delivery id>/Manifest.json

each repeating every earlier line of the month of its account. The accounts (fleet.py): AWS, in USD, export
`gpuledger-focus`, bills the `east` cluster and everything of no cluster (the shared bucket, NAT, the support
fee, the credit, the data-prep instance); Kestrel GPU Cloud, in EUR, export `kestrel-focus`, bills the `west`
cluster: its instance hours, its commitment's Unused and Purchase rows, its tax, and the storage and network
lines of the projects on west. At 12:00 UTC a delivery holds the month's lines that
started before noon, with the day's Tax lines estimated (half the day's tax); after the day ends, the
next holds the whole day with its tax restated in full. The manifest is shaped like a Data Exports
one (`executionId`, `exportArn`, `billingPeriod`, `columns`, `dataFiles` as s3:// URIs) and the files'
modification times are the delivery times; delivery ids sort by time too. The last delivery of each
month holds every line of the month, with the amounts below: it is the account's bill.

UTF-8, header row, comma-separated, minimal RFC 4180 quoting, LF line ends, nulls empty, timestamps
YYYY-MM-DDTHH:MM:SSZ, money as plain decimal strings with at most 10 decimal places. Content of a day:

- per node 24 hourly instance lines (reserved pool: savings-plan `Committed`/`Used`, BilledCost 0; shared
  pool: on-demand `Standard`), tagged {"node","cluster","pool"} (+ "team" for reserved pools);
- per savings plan 24 hourly `Unused` rows and one daily `Purchase` row (both tagged {"team","pool"} of the
  pool the plan covers);
- per project a storage line ({"project": p}) and a network line ({"user:project": p}, the alias spelling);
  a CPU data-prep instance (24 hourly lines tagged {"Project": "llm-7b"}, a resource that is no GPU node);
  untagged shared storage (Tags "{}") and shared networking (Tags empty);
- per cluster a Tax line (7 % / 6.25 % of the day's on-demand instance cost), on the cluster's account;
- on the first day: a 3-day storage line; on the first simulated day of each month: the month's support fee
  (ChargePeriod = the calendar month); on the third day (or the last, if shorter): one negative Credit line.
"""
from __future__ import annotations

import calendar
import csv
import datetime as dt
import json
import os
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np

from .fleet import BILLING_ACCOUNTS, CLUSTER_BY_NAME, CLUSTERS, PROJECTS, BillingAccount, Fleet, hexdigest

COLUMNS = ("BillingAccountId,BillingAccountName,BillingCurrency,BillingPeriodStart,BillingPeriodEnd,"
           "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,ChargeClass,ChargeDescription,ChargeFrequency,"
           "PricingCategory,PricingQuantity,PricingUnit,ListCost,ContractedCost,BilledCost,EffectiveCost,"
           "ConsumedQuantity,ConsumedUnit,CommitmentDiscountId,CommitmentDiscountType,"
           "CommitmentDiscountCategory,CommitmentDiscountStatus,ProviderName,PublisherName,InvoiceIssuerName,"
           "InvoiceId,RegionId,ResourceId,ResourceName,ResourceType,ServiceCategory,ServiceName,SkuId,"
           "SubAccountId,SubAccountName,Tags,x_LineItemId").split(",")
Q10 = Decimal("1e-10")
TAX_RATE = {"east": Decimal("0.07"), "west": Decimal("0.0625")}
PROJECT_CLUSTER = {"llm-70b": "east", "llm-7b": "east", "rlhf": "west", "sft": "west", "moe-exp": "west",
                   "long-context": "west", "eval-harness": "east", "distill": "east"}
FSX_GB_MONTH = Decimal("0.145")
EGRESS_GB = Decimal("0.02")
DATAPREP_HOURLY = Decimal("0.8064")


def money(d: Decimal) -> str:
    s = format(d.normalize(), "f")
    return "0" if s in ("-0", "0") else s


def ts(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def month_bounds(t: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    a = t.replace(day=1, hour=0, minute=0, second=0)
    b = (a + dt.timedelta(days=32)).replace(day=1)
    return a, b


def sku(*parts: str) -> str:
    return hexdigest(0, "sku", *parts, n=16).upper()


class FocusDay:
    """Collects one day's lines; each line is a dict over COLUMNS plus the money as Decimals. A line is billed
    by its cluster's account; lines of no cluster take east's (AWS), with its region and sub-account."""

    def __init__(self, seed: int, day: dt.date):
        self.seed, self.day, self.rows = seed, day, []

    def add(self, cps: dt.datetime, cpe: dt.datetime, category: str, service_cat: str, service: str,
            billed: Decimal, effective: Decimal, *, list_cost: Decimal | None = None,
            contracted: Decimal | None = None, description: str = "", frequency: str = "Usage-Based",
            pricing_cat: str | None = "Standard", qty: Decimal | None = None, unit: str | None = None,
            consumed: bool = True, cd: tuple[str, str, str, str | None] | None = None, region: str = "",
            resource_id: str = "", resource_name: str = "", resource_type: str = "", sku_id: str = "",
            cluster: str = "east", tags: dict | None = None, tags_raw: str | None = None) -> None:
        bps, bpe = month_bounds(cps)
        spec = CLUSTER_BY_NAME[cluster]
        acct = spec.account
        r = {
            "BillingAccountId": acct.id, "BillingAccountName": acct.name,
            "BillingCurrency": acct.currency, "BillingPeriodStart": ts(bps), "BillingPeriodEnd": ts(bpe),
            "ChargePeriodStart": ts(cps), "ChargePeriodEnd": ts(cpe), "ChargeCategory": category,
            "ChargeClass": "", "ChargeDescription": description, "ChargeFrequency": frequency,
            "PricingCategory": pricing_cat or "", "PricingQuantity": money(qty) if qty is not None else "",
            "PricingUnit": unit or "",
            "ListCost": money(list_cost if list_cost is not None else billed),
            "ContractedCost": money(contracted if contracted is not None else effective),
            "BilledCost": money(billed), "EffectiveCost": money(effective),
            "ConsumedQuantity": money(qty) if (consumed and qty is not None) else "",
            "ConsumedUnit": unit if (consumed and qty is not None) else "",
            "CommitmentDiscountId": cd[0] if cd else "", "CommitmentDiscountType": cd[1] if cd else "",
            "CommitmentDiscountCategory": cd[2] if cd else "",
            "CommitmentDiscountStatus": (cd[3] or "") if cd else "",
            "ProviderName": acct.provider, "PublisherName": acct.provider, "InvoiceIssuerName": acct.provider,
            "InvoiceId": f"{acct.invoice_prefix}-{bps:%Y-%m}-{acct.id[-4:]}", "RegionId": region or spec.region,
            "ResourceId": resource_id, "ResourceName": resource_name, "ResourceType": resource_type,
            "ServiceCategory": service_cat, "ServiceName": service, "SkuId": sku_id,
            "SubAccountId": spec.sub_account_id, "SubAccountName": spec.sub_account_name,
            "Tags": tags_raw if tags_raw is not None else json.dumps(tags or {}, separators=(",", ":")),
            "x_LineItemId": hexdigest(self.seed, "lineitem", self.day.isoformat(), len(self.rows), n=32),
        }
        self.rows.append((r, billed, effective, cps, cpe))


def build_day(fleet: Fleet, seed: int, day: dt.date, day_index: int, n_days: int, first_of_month: bool
              ) -> FocusDay:
    rng = np.random.default_rng([seed, 505, day_index])
    fd = FocusDay(seed, day)
    d0 = dt.datetime(day.year, day.month, day.day)
    d1 = d0 + dt.timedelta(days=1)
    ondemand = {c.name: Decimal(0) for c in CLUSTERS}
    scale = Decimal(len(fleet.nodes)) / 16
    for h in range(24):
        a, b = d0 + dt.timedelta(hours=h), d0 + dt.timedelta(hours=h + 1)
        for spec in CLUSTERS:
            acct = spec.account
            nodes = fleet.cluster_nodes(spec.name)
            sku_id = sku(spec.instance_type, spec.region)
            used = Decimal(0)
            for n in nodes:
                tags = {"node": n.hostname, "cluster": n.cluster, "pool": n.pool}
                common = dict(region=spec.region, resource_id=n.resource_id, resource_name=n.hostname,
                              resource_type="instance", sku_id=sku_id, cluster=spec.name, qty=Decimal(1),
                              unit="Hours", list_cost=spec.on_demand_hourly)
                if n.owner_team:
                    tags["team"] = n.owner_team
                    fd.add(a, b, "Usage", "Compute", acct.compute_service, Decimal(0),
                           spec.committed_hourly, pricing_cat="Committed", contracted=spec.committed_hourly,
                           description=f"{acct.commitment_name} covered usage of {spec.instance_type}",
                           cd=(fleet.commitment_id(spec.name), acct.commitment_type, "Spend", "Used"),
                           tags=tags, **common)
                    used += spec.committed_hourly
                else:
                    fd.add(a, b, "Usage", "Compute", acct.compute_service, spec.on_demand_hourly,
                           spec.on_demand_hourly,
                           description=f"{acct.symbol}{spec.on_demand_hourly} per On Demand Linux "
                                       f"{spec.instance_type} Instance Hour", tags=tags, **common)
                    ondemand[spec.name] += spec.on_demand_hourly
            if used:
                commit = commitment_hourly(used)
                unused = commit - used
                fd.add(a, b, "Usage", "Compute", acct.commitment_service, Decimal(0), unused,
                       pricing_cat="Committed", list_cost=unused, contracted=unused, consumed=False,
                       description=f"Unused {acct.commitment_name} commitment",
                       cd=(fleet.commitment_id(spec.name), acct.commitment_type, "Spend", "Unused"),
                       resource_id=fleet.commitment_id(spec.name), resource_type="Savings Plan",
                       cluster=spec.name, qty=Decimal(1), unit="Hours",
                       tags={"team": spec.reserved_team, "pool": f"{spec.name}-reserved"})
        fd.add(a, b, "Usage", "Compute", "Amazon Elastic Compute Cloud", DATAPREP_HOURLY, DATAPREP_HOURLY,
               description=f"${DATAPREP_HOURLY} per On Demand Linux m7i.4xlarge Instance Hour",
               resource_id="i-0" + hexdigest(seed, "instance", "dataprep-01", n=16), resource_name="dataprep-01",
               resource_type="instance", sku_id=sku("m7i.4xlarge", "us-east-1"), qty=Decimal(1), unit="Hours",
               tags={"Project": "llm-7b", "Name": "dataprep-01"})
    for spec in CLUSTERS:
        n_res = sum(1 for n in fleet.cluster_nodes(spec.name) if n.owner_team)
        if n_res:
            acct = spec.account
            commit = commitment_hourly(spec.committed_hourly * n_res)
            fd.add(d0, d1, "Purchase", "Compute", acct.commitment_service, commit * 24, Decimal(0),
                   list_cost=commit * 24, contracted=commit * 24, frequency="Recurring", qty=Decimal(24),
                   unit="Hours", consumed=False, description=f"{acct.commitment_name} recurring fee",
                   cd=(fleet.commitment_id(spec.name), acct.commitment_type, "Spend", None),
                   resource_id=fleet.commitment_id(spec.name), resource_type="Savings Plan", cluster=spec.name,
                   tags={"team": spec.reserved_team, "pool": f"{spec.name}-reserved"})
    days_in_month = calendar.monthrange(day.year, day.month)[1]
    for p in PROJECTS:
        c = PROJECT_CLUSTER[p]
        acct = CLUSTER_BY_NAME[c].account
        tb = Decimal(int(hexdigest(seed, "tb", p, n=4), 16) % 350 + 50)
        gb_month = (tb * 1024 * scale / days_in_month).quantize(Q10)
        cost = (gb_month * FSX_GB_MONTH).quantize(Q10)
        fd.add(d0, d1, "Usage", "Storage", acct.storage_service, cost, cost, qty=gb_month, unit="GB-Month",
               description="FSx for Lustre persistent SSD storage", cluster=c,
               resource_id="fs-0" + hexdigest(seed, "fsx", p, n=16), resource_name=f"{p}-lustre",
               resource_type="file-system", sku_id=sku("fsx", p), tags={"project": p})
        gb = (Decimal(int(rng.integers(200, 5000))) * scale).quantize(Q10)
        cost = (gb * EGRESS_GB).quantize(Q10)
        fd.add(d0, d1, "Usage", "Networking", acct.network_service, cost, cost, qty=gb, unit="GB",
               description="Data transfer out / inter-region", cluster=c, sku_id=sku("egress", c),
               tags={"user:project": p})
    gb = (Decimal(int(rng.integers(80_000, 200_000))) * scale).quantize(Q10)
    cost = (gb * Decimal("0.023") / days_in_month).quantize(Q10)
    fd.add(d0, d1, "Usage", "Storage", "Amazon Simple Storage Service", cost, cost, qty=gb, unit="GB-Month",
           description="Shared datasets bucket, standard storage", resource_id="arn:aws:s3:::gpuledger-shared-data",
           resource_name="gpuledger-shared-data", resource_type="bucket", sku_id=sku("s3"), tags={})
    gb = (Decimal(int(rng.integers(2_000, 20_000))) * scale).quantize(Q10)
    cost = (gb * Decimal("0.045")).quantize(Q10)
    fd.add(d0, d1, "Usage", "Networking", "Amazon Virtual Private Cloud", cost, cost, qty=gb, unit="GB",
           description="NAT Gateway data processed", sku_id=sku("nat"), tags_raw="")
    for spec in CLUSTERS:
        tax = (ondemand[spec.name] * TAX_RATE[spec.name]).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        fd.add(d0, d1, "Tax", "Compute", spec.account.compute_service, tax, tax, pricing_cat=None,
               description=f"Sales tax on {spec.instance_type} usage", frequency="Usage-Based",
               cluster=spec.name, tags_raw="")
    if day_index == 0:
        amount = (Decimal("1234.5678901234") * scale).quantize(Q10)
        fd.add(d0, d0 + dt.timedelta(days=3), "Usage", "Storage", "Amazon Elastic Block Store", amount, amount,
               qty=(Decimal(5000) * scale).quantize(Q10), unit="GB-Month", description="EBS snapshot archive restore",
               resource_id="snap-0" + hexdigest(seed, "snap", n=16), resource_type="snapshot",
               sku_id=sku("ebs-snap"), tags={"project": "llm-70b"})
    if first_of_month:
        a, b = month_bounds(d0)
        fee = Decimal("312.50") * len(fleet.nodes)
        fd.add(a, b, "Usage", "Management and Governance", "AWS Support (Enterprise)", fee, fee,
               frequency="Recurring", qty=Decimal(1), unit="Month", consumed=False,
               description="AWS Support (Enterprise) monthly fee", sku_id=sku("support"), tags={})
    if day_index == min(2, n_days - 1):
        credit = -(Decimal(25) * Decimal(len(fleet.nodes)))
        fd.add(d0, d1, "Credit", "Compute", "Amazon Elastic Compute Cloud", credit, credit, list_cost=Decimal(0),
               contracted=Decimal(0), pricing_cat=None, frequency="One-Time", description="AWS Promotional Credit",
               tags_raw="")
    return fd


def commitment_hourly(used: Decimal) -> Decimal:
    """The plan is sized ~6 % above what the reserved pool uses, so its Unused row is never zero."""
    return (used * Decimal("1.06")).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


BUCKET = "gpuledger-billing"


@dataclass
class Delivery:
    account: BillingAccount                   # whose export delivered it
    period: tuple[dt.datetime, dt.datetime]   # the billing period, [start, end)
    cutoff: dt.datetime                       # lines starting before this are in it
    rows: list[dict]

    @property
    def delivered_at(self) -> dt.datetime:
        return self.cutoff + dt.timedelta(hours=2)


def month_to_date_deliveries(days: list[FocusDay]) -> list[Delivery]:
    """Two deliveries per simulated day and billing account, in delivery order: at noon (the day's tax
    estimated) and after the day (complete); each holds every line of its account and billing period that
    started before its cutoff."""
    out = []
    for i, fd in enumerate(days):
        d0 = dt.datetime(fd.day.year, fd.day.month, fd.day.day)
        period = month_bounds(d0)
        month = [x for x in days[: i + 1] if month_bounds(dt.datetime(x.day.year, x.day.month, x.day.day)) == period]
        for cutoff, complete in ((d0 + dt.timedelta(hours=12), False), (d0 + dt.timedelta(days=1), True)):
            for acct in BILLING_ACCOUNTS:
                rows = []
                for x in month:
                    for r, billed, _, cps, _ in x.rows:
                        if cps >= cutoff or r["BillingAccountId"] != acct.id:
                            continue
                        if not complete and x is fd and r["ChargeCategory"] == "Tax":
                            estimate = money((billed / 2).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
                            r = {**r, "BilledCost": estimate, "EffectiveCost": estimate, "ListCost": estimate,
                                 "ContractedCost": estimate}
                        rows.append(r)
                out.append(Delivery(acct, period, cutoff, rows))
    return out


def write_delivery(landing: Path, seed: int, delivery: Delivery) -> Path:
    """Writes the delivery's data file and its manifest under its account's export folder; returns the data
    file."""
    a, b = delivery.period
    export = delivery.account.export
    digest = hexdigest(seed, "delivery", export, delivery.cutoff.isoformat(), n=12)
    execution = f"{delivery.cutoff:%Y%m%dT%H%M%SZ}-{digest}"
    below = f"{export}/{a:%Y%m%d}-{b:%Y%m%d}/{execution}"
    folder = landing / "bills" / "focus" / below
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{export}-00001.csv"
    with data.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in delivery.rows:
            w.writerow([r[c] for c in COLUMNS])
    manifest = {
        "executionId": execution,
        "exportArn": delivery.account.export_arn,
        "billingPeriod": {"start": a.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "end": b.strftime("%Y-%m-%dT%H:%M:%S.000Z")},
        "columns": [{"name": c, "type": "string"} for c in COLUMNS],
        "dataFiles": [f"s3://{BUCKET}/exports/{below}/{data.name}"],
    }
    (folder / "Manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    when = delivery.delivered_at.replace(tzinfo=dt.timezone.utc).timestamp()
    for path in (data, folder / "Manifest.json"):
        os.utime(path, (when, when))
    return data
