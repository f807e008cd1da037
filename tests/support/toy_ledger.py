"""A bill format gpuledger does not ship, declared the way a site would add one (GPULEDGER_FORMATS):
its parser and its declaration, nothing else. A "provider ledger" is a `;`-separated text file under
`bills/toy_ledger/`, one charge per line:

    start;hours;node;team;amount;currency;category
    2026-11-02T00:00:00Z;1;n1;;4.1234567890123;USD;Usage

The parser turns each line into the FOCUS columns it stands for and hands them to the FOCUS reader,
as the CUR converter does; rows land in staging.stg_focus__bill_lines beside FOCUS and CUR.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl

from models import landing
from pipelines.ingest import focus
from pipelines.ingest.plausible import guard
from pipelines.landing.bill_deliveries import sync_bills
from pipelines.landing.parsed import Parsed, file_reject
from pipelines.landing.source import Source
from pipelines.lib.config import OrgConfig

NAME = "toy_ledger"
COLUMNS = ["start", "hours", "node", "team", "amount", "currency", "category"]


def parse(con: duckdb.DuckDBPyConnection, path: Path, rel: str, cfg: OrgConfig) -> Parsed:
    try:
        raw = pl.read_csv(path, separator=";", infer_schema=False)
    except Exception as err:  # noqa: BLE001 - any unreadable file is refused whole, saying why
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(NAME, rel, f"unreadable provider ledger: {err}"))
    missing = [c for c in COLUMNS if c not in raw.columns]
    if missing:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(NAME, rel, f"missing column(s): {', '.join(missing)}"))
    start = pl.col("start").str.to_datetime("%Y-%m-%dT%H:%M:%SZ", strict=False)
    end = start + pl.duration(hours=pl.col("hours").cast(pl.Int64, strict=False))
    as_focus = raw.select(
        pl.col("start").alias("ChargePeriodStart"),
        end.dt.strftime("%Y-%m-%dT%H:%M:%SZ").alias("ChargePeriodEnd"),
        pl.col("category").alias("ChargeCategory"),
        pl.col("amount").alias("BilledCost"),   # the amount as written: the FOCUS reader reads it exactly
        pl.col("amount").alias("EffectiveCost"),
        pl.col("currency").alias("BillingCurrency"),
        pl.col("node").map_elements(lambda n: f"i-{n}" if n else "", return_dtype=pl.String).alias("ResourceId"),
        pl.lit("instance").alias("ResourceType"),
        pl.lit("Compute").alias("ServiceCategory"),
        pl.struct("node", "team").map_elements(
            lambda r: json.dumps({k: v for k, v in (("node", r["node"]), ("team", r["team"])) if v}),
            return_dtype=pl.String).alias("Tags"),
    )
    return focus.from_focus_frame(con, as_focus, rel, NAME, default_currency=cfg.default_currency)


TOY_LEDGER = guard(Source(
    name=NAME,
    table="staging/stg_focus__bill_lines",
    patterns=("bills/toy_ledger/**/*.txt",),
    parse=parse,
    contract=landing.FocusBillLine,
    span=(pl.col("charge_period_start"), pl.col("charge_period_end") - pl.duration(microseconds=1)),
    time_columns=(("charge_period_start", "start"),),
    row_word="row",
    group="bills",
    is_bill=True,
    sync=sync_bills,
))
SOURCES = (TOY_LEDGER,)
