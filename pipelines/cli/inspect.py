"""`gpuledger inspect`: every landing file parsed, nothing written. What a platform engineer runs
before wiring a new export in. The JSON shape is documented in docs/operations.md (#inspecting-a-landing-zone) and stable.

Files are summarised one at a time, as they are parsed: bill money is summed per file and currency
into exact Decimals, quarantine reasons are counted, and the other sources keep only the few columns
their totals need, so a large landing zone is never held whole. A bill source counts its current
deliveries only (pipelines/landing/deliveries.py): what the warehouse would stage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal, localcontext
from pathlib import Path

import duckdb
import polars as pl

from pipelines.landing.parsed import Parsed, file_reject, refuses_file
from pipelines.landing.deliveries import CURRENT, UNREADABLE, find_manifests
from pipelines.ingest.sources import ALL, INVENTORY
from pipelines.landing.bill_deliveries import delivery_state
from pipelines.lib.config import OrgConfig
from pipelines.lib.dates import utc_today
from pipelines.ingest.ignored import ignored_files
from pipelines.landing.source import Source, discover

MAX_REASONS = 20
STATUSES = ("current", "superseded", "duplicate", "unreadable")
# exact Decimal arithmetic for sums of DECIMAL(38,18) amounts and DECIMAL(38,38) roundings
EXACT_DIGITS = 80


def inspect_landing(root: Path, cfg: OrgConfig) -> dict[str, dict | list]:
    report: dict[str, dict | list] = {}
    inventory, bill_keys = [], []
    # inspect is a CLI that writes nothing and opens no warehouse: the parsers' SQL and the bill files'
    # digests (part of what it decides deliveries by) run on one in-memory DuckDB for the pass, by the SQL
    # sync runs them by
    with duckdb.connect() as con:
        for source in ALL:
            entry = (_bills(con, root, source, cfg, bill_keys) if source.is_bill
                     else _plain(con, root, source, cfg, inventory))
            if entry is not None:
                report[source.name] = entry
    if inventory:
        # which source costs which node: the bill, a rate card, a contract, owned hardware, or none
        from pipelines.cli.inspect_costing import node_costing

        keys = pl.concat(bill_keys, how="diagonal_relaxed").unique() if bill_keys else pl.DataFrame()
        report["costing"] = node_costing(cfg, pl.concat(inventory, how="diagonal_relaxed"), keys, _last_day(report))
    ignored = ignored_files(root)
    if ignored:
        report["ignored_files"] = ignored
    return report


def _last_day(report: dict) -> date:
    """The last day the landing covers (bills' last charge, telemetry, jobs), else today (UTC)."""
    seen = [v for entry in report.values() if isinstance(entry, dict)
            for key in ("last_charge", "last_ts") if (v := entry.get(key))]
    if not seen:
        return utc_today()
    last = max(datetime.fromisoformat(v) for v in seen)
    # a charge period's end is exclusive: midnight belongs to the day before
    return (last - timedelta(microseconds=1)).date() if last.time() == time(0) else last.date()


def _plain(con: duckdb.DuckDBPyConnection, root: Path, source: Source, cfg: OrgConfig,
           inventory: list[pl.DataFrame]) -> dict | None:
    files = discover(root, source)
    if not files:
        return None
    summary = _Summary(bills=False)
    for path, rel in files:
        summary.add_file(source, rel, _parsed_parts(con, source, path, rel, cfg))
    if source is INVENTORY:  # the nodes the costing below is of
        inventory.extend(summary.facts)
    return summary.report(source)


def _bills(con: duckdb.DuckDBPyConnection, root: Path, source: Source, cfg: OrgConfig,
           bill_keys: list[pl.DataFrame]) -> dict | None:
    """The current deliveries, summarised chunk by chunk. One file and no manifest is current by itself,
    so the delivery rule, which reads every file whole, is only consulted when there is a choice."""
    files = discover(root, source)
    if not files:
        return None
    summary = _Summary(bills=True, node_keys=bill_keys)
    if len(files) == 1 and not find_manifests(root, source.folder)[0]:
        path, rel = files[0]
        summary.add_file(source, rel, _parsed_parts(con, source, path, rel, cfg))
        entry = summary.report(source)
        status = "unreadable" if entry["unreadable_files"] else "current"
        entry["deliveries"] = {**{s: int(s == status) for s in STATUSES}, "manifests": 0}
        return entry
    state = delivery_state(con, root, source, cfg, {}, keep_bytes=0)
    for rel, f in sorted(state.found.items()):
        status = state.decisions[rel].status
        if status == CURRENT:
            summary.add_file(source, rel, _parsed_parts(con, source, f.path, rel, cfg))
        elif status == UNREADABLE:
            summary.add_file(source, rel, [Parsed(rows=pl.DataFrame(), rejects=file_reject(source.name, rel, f.reason))])
    entry = summary.report(source)
    entry["files"] = sum(1 for f in state.found.values() if f.facts is not None)
    statuses = Counter(d.status for d in state.decisions.values())
    entry["deliveries"] = {**{s: statuses.get(s, 0) for s in STATUSES}, "manifests": len(state.manifests)}
    if set_aside := state.set_aside():
        entry["set_aside"] = set_aside
    if state.resolution.missing:
        entry["missing_from_manifests"] = state.resolution.missing
    return entry


@dataclass
class _Money:
    """Exact sums of one currency's stored amounts and of their roundings."""

    effective_cost: Decimal = Decimal(0)
    billed_cost: Decimal = Decimal(0)
    effective_cost_rounding: Decimal = Decimal(0)
    billed_cost_rounding: Decimal = Decimal(0)

    def add(self, row: dict) -> None:
        with localcontext(prec=EXACT_DIGITS):
            for name in ("effective_cost", "billed_cost", "effective_cost_rounding", "billed_cost_rounding"):
                setattr(self, name, getattr(self, name) + (row[name] or Decimal(0)))

    def written(self) -> dict:
        """What the files wrote: stored + rounding, per measure, and the rounding the ledger records."""
        with localcontext(prec=EXACT_DIGITS):
            return {
                "effective_cost": _text(self.effective_cost + self.effective_cost_rounding),
                "billed_cost": _text(self.billed_cost + self.billed_cost_rounding),
                "rounding": {"effective_cost": _text(self.effective_cost_rounding),
                             "billed_cost": _text(self.billed_cost_rounding)},
            }


@dataclass
class _Summary:
    bills: bool
    files: int = 0
    accepted: int = 0
    quarantined: int = 0
    reasons: dict[str, dict] = field(default_factory=dict)  # reason -> rows, first file and row
    unreadable: dict[str, None] = field(default_factory=dict)  # files refused whole, in the order met
    dropped: Counter = field(default_factory=Counter)
    formats: dict[str, str] = field(default_factory=dict)  # file -> the format it was read as (Parsed.read_as)
    facts: list[pl.DataFrame] = field(default_factory=list)
    money: dict[str, _Money] = field(default_factory=dict)  # billing currency -> sums
    defaulted: Counter = field(default_factory=Counter)  # default currency -> rows that took it
    first_charge: datetime | None = None
    last_charge: datetime | None = None
    # distinct (resource_id, tags) of staged bill rows: which nodes a bill line costs
    node_keys: list[pl.DataFrame] | None = None

    def add_file(self, source: Source, rel: str, parts: Iterable[Parsed]) -> None:
        """A file's parsed chunks, summarised one by one; a file refused part-way counts as refused
        whole, as the pipeline stages nothing of it."""
        own = _Summary(bills=self.bills, node_keys=[] if self.node_keys is not None else None)
        read_as = None
        for parsed in parts:
            if refuses_file(parsed):
                own = _Summary(bills=self.bills, node_keys=[] if self.node_keys is not None else None)
            own.add(source, parsed)
            read_as = read_as or parsed.read_as
        self.files += 1
        if read_as:
            self.formats[rel] = read_as
        self.merge(own)

    def merge(self, other: _Summary) -> None:
        self.accepted += other.accepted
        self.quarantined += other.quarantined
        for reason, seen in other.reasons.items():
            mine = self.reasons.setdefault(reason, {**seen, "rows": 0})
            mine["rows"] += seen["rows"]
        self.unreadable.update(other.unreadable)
        self.dropped.update(other.dropped)
        self.facts.extend(other.facts)
        if self.node_keys is not None and other.node_keys:
            self.node_keys.extend(other.node_keys)
        for currency, money in other.money.items():
            self.money.setdefault(currency, _Money()).add(vars(money))
        self.defaulted.update(other.defaulted)
        self.first_charge = min(filter(None, (self.first_charge, other.first_charge)), default=None)
        self.last_charge = max(filter(None, (self.last_charge, other.last_charge)), default=None)

    def add(self, source: Source, parsed: Parsed) -> None:
        self.accepted += parsed.rows.height
        self.quarantined += parsed.rejects.height
        self.dropped.update(parsed.dropped)
        self._count_reasons(parsed.rejects)
        # a whole file refused (unreadable, empty, not the format) is one quarantine row, `row_ref` file
        refused = parsed.rejects.filter(pl.col("row_ref") == "file")["file"] if parsed.rejects.height else []
        self.unreadable.update(dict.fromkeys(refused))
        if parsed.rows.height == 0:
            return
        if self.bills:
            self._add_bill_rows(parsed)
        else:
            self.facts.append(_facts(source, parsed.rows))

    def _count_reasons(self, rejects: pl.DataFrame) -> None:
        if rejects.height == 0:
            return
        by_reason = rejects.group_by("reason", maintain_order=True).agg(
            pl.len().alias("rows"), pl.col("file").first(), pl.col("row_ref").first().alias("first_row")
        )
        for row in by_reason.iter_rows(named=True):  # one row per distinct reason of the file
            seen = self.reasons.setdefault(row["reason"], {"reason": row["reason"], "rows": 0, "file": row["file"],
                                                           "first_row": row["first_row"]})
            seen["rows"] += row["rows"]

    def _add_bill_rows(self, parsed: Parsed) -> None:
        rows = parsed.rows
        sums = rows.group_by("billing_currency").agg(
            pl.col("effective_cost", "billed_cost", "effective_cost_rounding", "billed_cost_rounding").sum()
        )
        for row in sums.iter_rows(named=True):  # one row per currency of the file
            self.money.setdefault(row["billing_currency"], _Money()).add(row)
        self.defaulted.update(parsed.defaulted.get("billing_currency", {}))
        if self.node_keys is not None:
            self.node_keys.append(rows.select([c for c in ("resource_id", "tags") if c in rows.columns]).unique())
        first, last = rows.select(pl.col("charge_period_start").min(), pl.col("charge_period_end").max()).row(0)
        self.first_charge = min(filter(None, (self.first_charge, first)), default=None)
        self.last_charge = max(filter(None, (self.last_charge, last)), default=None)

    def report(self, source: Source) -> dict:
        entry = {
            "files": self.files,
            "rows": self.accepted + self.quarantined,
            "quarantined": self.quarantined,
            "reasons": sorted(self.reasons.values(), key=lambda r: -r["rows"])[:MAX_REASONS],
            "unreadable_files": list(self.unreadable),
        }
        if self.dropped:
            entry["dropped"] = dict(self.dropped)
        if self.formats:
            entry["formats"] = dict(sorted(self.formats.items()))
        if self.bills:
            entry.update(self._bill_totals())
        else:
            facts = pl.concat(self.facts, how="diagonal_relaxed") if self.facts else pl.DataFrame()
            entry.update(source.summary.totals(facts) if source.summary else {})
        return entry

    def _bill_totals(self) -> dict:
        """Money per currency, never added across currencies: one currency (or none) gives the totals
        at the top, more give `by_currency` instead."""
        currencies = sorted(self.money)
        totals: dict = {"currencies": currencies}
        if len(currencies) <= 1:
            totals.update((self.money[currencies[0]] if currencies else _Money()).written())
        else:
            totals["by_currency"] = {c: self.money[c].written() for c in currencies}
        totals["default_currency_rows"] = dict(self.defaulted)
        totals["first_charge"] = _iso(self.first_charge)
        totals["last_charge"] = _iso(self.last_charge)
        return totals


def _parsed_parts(con: duckdb.DuckDBPyConnection, source: Source, path: Path, rel: str,
                  cfg: OrgConfig) -> Iterable[Parsed]:
    if source.summary_chunks is not None:
        return source.summary_chunks(con, path, rel, cfg)
    return [source.parse(con, path, rel, cfg)]


def _facts(source: Source, rows: pl.DataFrame) -> pl.DataFrame:
    """Keeps only what the totals need, so a fleet's telemetry is not held whole."""
    wanted = source.summary.facts if source.summary else rows.columns
    kept = rows.select([c for c in wanted if c in rows.columns])
    return kept.unique() if source.summary and source.summary.distinct else kept


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def _text(amount: Decimal) -> str:
    return format(amount.normalize(), "f") if amount else "0"
