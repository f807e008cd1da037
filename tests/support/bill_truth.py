"""The bill's day shares computed straight from FOCUS landing files, independently of the pipeline:
each line is cut over the hours of its charge period, weighted by microseconds, and its amount split
in units of 1e-18 by largest remainder (ties to the earlier hour), as
docs/ledger.md#how-a-bill-line-is-split says. Each line is in its own BillingCurrency (USD where a
file has none, the config's default), and amounts in two currencies are never added: day shares are
per (day, currency).

Which files are the bill is read from the exporter's own word, not from the pipeline's rule: in a
folder of deliveries (`<billing period>/<delivery id>/Manifest.json`), the newest manifest's
`dataFiles`; everywhere else, every file."""

from __future__ import annotations

import csv
import json
import os
from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal, localcontext
from pathlib import Path

UNIT = Decimal("1e-18")
DEFAULT_CURRENCY = "USD"


def _ts(text: str) -> datetime:
    text = text.strip().replace("T", " ").replace("Z", "")
    return datetime.fromisoformat(text).replace(tzinfo=None)


def _split(units: int, weights: list[int]) -> list[int]:
    total = sum(weights)
    sign = -1 if units < 0 else 1
    units = abs(units)
    floors = [units * w // total for w in weights]
    rems = [units * w % total for w in weights]
    left = units - sum(floors)
    order = sorted(range(len(weights)), key=lambda i: (-rems[i], i))
    for i in order[:left]:
        floors[i] += 1
    return [sign * f for f in floors]


def bill_lines(landing: Path):
    """Every line of the bill: (file relative to the landing root, 1-based data row, the row's cells)."""
    for path in current_bill_files(landing):
        rel = path.relative_to(landing).as_posix()
        with path.open(newline="") as fh:
            for n, row in enumerate(csv.DictReader(fh), start=1):
                yield rel, n, row


def currency(row: dict) -> str:
    """A line's BillingCurrency as written; a file without the column (or an empty cell) is in USD."""
    return row.get("BillingCurrency") or DEFAULT_CURRENCY


def line_currencies(landing: Path) -> dict[tuple[str, int], str]:
    """(file, 1-based data row) → the line's billing currency."""
    return {(rel, n): currency(row) for rel, n, row in bill_lines(landing)}


def line_hour_units(landing: Path) -> dict[tuple[str, int], dict[datetime, tuple[int, int]]]:
    """(file relative to the landing root, 1-based data row) → hour → (EffectiveCost, BilledCost) of
    that hour's piece, in units of 1e-18 of the line's currency."""
    return {(rel, n): _hour_units(row) for rel, n, row in bill_lines(landing)}


def _hours(row: dict) -> tuple[list[datetime], list[int]]:
    """The hours a line's charge period covers, with the microseconds it covers of each (a point in time:
    its hour, weight 1)."""
    start, end = _ts(row["ChargePeriodStart"]), _ts(row["ChargePeriodEnd"])
    hour = start.replace(minute=0, second=0, microsecond=0)
    hours, weights = ([hour], [1]) if end <= start else ([], [])
    while hour < end:
        nxt = hour + timedelta(hours=1)
        w = (min(end, nxt) - max(start, hour)) // timedelta(microseconds=1)
        if w > 0:
            hours.append(hour)
            weights.append(w)
        hour = nxt
    return hours, weights


def _hour_units(row: dict) -> dict[datetime, tuple[int, int]]:
    hours, weights = _hours(row)
    e = _split(int(Decimal(row["EffectiveCost"]) / UNIT), weights)
    b = _split(int(Decimal(row["BilledCost"]) / UNIT), weights)
    return dict(zip(hours, zip(e, b)))


def line_hour_metric_units(landing: Path, column: str) -> dict[tuple[str, int], dict[datetime, int] | None]:
    """(file, 1-based data row) → hour → that hour's piece of the line's `column` (ListCost, PricingQuantity…,
    as written, rounded half-even to 1e-18) in units of 1e-18, cut like EffectiveCost; None for a line
    that leaves the column empty."""
    out: dict[tuple[str, int], dict[datetime, int] | None] = {}
    for rel, n, row in bill_lines(landing):
        text = (row.get(column) or "").strip()
        if not text:
            out[(rel, n)] = None
            continue
        hours, weights = _hours(row)
        with localcontext(prec=100):   # quantities reach 1e30 units: no rounding but the one below
            units = int(Decimal(text).scaleb(18).to_integral_value())   # half-even, as staging rounds
        out[(rel, n)] = dict(zip(hours, _split(units, weights)))
    return out


def current_bill_files(landing: Path) -> list[Path]:
    """The FOCUS CSV files that are the bill: per billing-period folder holding delivery folders with a
    Manifest.json, the files the newest manifest (modification time, then path) names; elsewhere all."""
    focus = landing / "bills" / "focus"
    newest: dict[Path, Path] = {}
    for manifest in focus.rglob("Manifest.json"):
        period = manifest.parent.parent
        if period not in newest or (os.stat(manifest).st_mtime, manifest) > (os.stat(newest[period]).st_mtime, newest[period]):
            newest[period] = manifest
    files = [p for p in focus.rglob("*.csv") if not any(period in p.parents for period in newest)]
    for manifest in newest.values():
        names = [key.rsplit("/", 1)[-1] for key in json.loads(manifest.read_text())["dataFiles"]]
        files += [manifest.parent / name for name in names]
    return sorted(files)


def day_shares(landing: Path) -> dict[tuple[date, str], tuple[Decimal, Decimal]]:
    """(UTC day, billing currency) → the bill's (EffectiveCost, BilledCost) share of that day."""
    shares: dict[tuple[date, str], list[int]] = defaultdict(lambda: [0, 0])
    for _, _, row in bill_lines(landing):
        cur = currency(row)
        for hour, (e, b) in _hour_units(row).items():
            shares[(hour.date(), cur)][0] += e
            shares[(hour.date(), cur)][1] += b
    return {k: (Decimal(e) * UNIT, Decimal(b) * UNIT) for k, (e, b) in shares.items()}
