"""The organisation's page (`gpuledger report --org`, docs/operations.md#commands): `<out_dir>/index.html`
and `index.md` beside the teams' report folders.

Per team and billing currency: its cost, its waste by the ledger's waste categories, its under-use (the
productive cost at low SM activity) and its savings opportunities; with `fx:` rates, each team's figures
in the reporting currency too (fx.py), where nothing without a rate is added. Per cluster and day, the
GPU-hours billed and the shares allocated, productive and idle (definitions in UTILISATION_NOTE). The
largest savings across the organisation, and a link to every team report the folder holds.
Reads `marts.*` and `finance.*` only; org_page renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, localcontext
from pathlib import Path

import duckdb

from models import ledger_categories
from pipelines.lib.names import file_name
from pipelines.lib.warehouse import has_table
from pipelines.reports import savings
from pipelines.reports.data import GPU_CATEGORIES, WASTE_KINDS, query
from pipelines.reports.fx import ReportingTotals, convert
from pipelines.reports.period import trend_window

TOP_SAVINGS = 15
INDEX = "index"  # the page's file name, .html and .md


@dataclass
class TeamMoney:
    """One team's figures in one billing currency over the period."""
    team: str
    currency: str
    by_category: dict[str, Decimal]
    low_activity_cost: Decimal = Decimal(0)
    saving_window: Decimal = Decimal(0)
    saving_monthly: Decimal = Decimal(0)

    @property
    def total(self) -> Decimal:
        return sum(self.by_category.values(), Decimal(0))

    @property
    def gpu_cost(self) -> Decimal:
        return sum((self.by_category.get(c, Decimal(0)) for c in GPU_CATEGORIES), Decimal(0))

    @property
    def waste(self) -> Decimal:
        return sum((self.by_category.get(c, Decimal(0)) for c in WASTE_KINDS), Decimal(0))


@dataclass
class InReporting:
    """A team's figures summed over its currencies in the reporting currency; `missing`: the currencies
    (with their amounts' texts left to the renderer) that had no rate and were not added."""
    team: str
    total: Decimal = Decimal(0)
    waste: Decimal = Decimal(0)
    low_activity_cost: Decimal = Decimal(0)
    saving_monthly: Decimal = Decimal(0)
    missing: list[str] = field(default_factory=list)


@dataclass
class Utilisation:
    cluster: str | None
    day: date | None  # None: the whole period
    billed: float     # GPU-seconds
    allocated: float
    productive: float
    idle: float


@dataclass
class OrgReport:
    start: date
    end: date
    label: str
    trend_start: date
    trend_end: date
    teams: list[TeamMoney]  # by team, then currency
    reporting_currency: str | None
    in_reporting: list[InReporting]  # per team; empty without `fx:`
    utilisation_daily: list[Utilisation]  # the trend window, per cluster and day
    utilisation: list[Utilisation]  # the period, per cluster
    savings: savings.Savings
    links: dict[str, list[str]]  # team -> report labels written in the folder (their .html files)
    data_first_day: date | None = None
    data_last_day: date | None = None

    @property
    def currencies(self) -> list[str]:
        return sorted({t.currency for t in self.teams})

    def team_names(self) -> list[str]:
        return sorted({t.team for t in self.teams} | set(self.links))


UTILISATION_NOTE = (
    "Shares of the billed GPU-hours of each cluster's nodes (marts.fct_node_hourly, every category of "
    "node-hours, joined to marts.dim_nodes for the cluster): allocated = held by a job (every category but "
    "idle GPUs with no job); productive = held by a job and in use (the productive category); idle = idle "
    "with no job plus held by a job at 0 % activity (idle_unallocated + allocated_idle). Allocated minus "
    "productive is the time jobs held and wasted (idle, failed, lost to interruptions, unmonitored). "
    "As Slurm's `sreport cluster utilization` splits allocated from idle, in GPU-hours rather than CPU-minutes.")


def check_org_request(con: duckdb.DuckDBPyConnection, start: date, end: date) -> None:
    """The period has ledger days; else a ValueError naming the days the ledger has."""
    first, last = con.execute("SELECT min(day), max(day) FROM marts.fct_cost_daily").fetchone()
    if first is None:
        raise ValueError("the ledger has no cost rows yet: run `gpuledger run` for some days first")
    if end < first or start > last:
        period = start.isoformat() if start == end else f"{start} to {end}"
        raise ValueError(f"the ledger has no day in {period}: its days run from {first} to {last}")


def load(con: duckdb.DuckDBPyConnection, start: date, end: date, label: str, out_dir: Path) -> OrgReport:
    for table in ("fct_cost_daily", "fct_job_cost", "fct_node_hourly", "dim_nodes"):
        if not has_table(con, "marts", table):
            raise RuntimeError(f"the warehouse has no marts.{table}: run `gpuledger run` for the days first, "
                               "or point at another warehouse")
    p = {"start": start, "end": end}
    ledger = query(con, "org_ledger", **p)
    teams: dict[tuple[str, str], TeamMoney] = {}
    for _, team, _, category, currency, _, effective, _ in ledger:
        if currency is None:
            continue
        t = teams.setdefault((team, currency), TeamMoney(team, currency, {}))
        t.by_category[category] = t.by_category.get(category, Decimal(0)) + effective
    low = query(con, "org_low_activity_cost", **p)
    for team, currency, _, cost in low:
        t = teams.setdefault((team, currency), TeamMoney(team, currency, {}))
        t.low_activity_cost += cost or Decimal(0)
    found = savings.load(con, start, end)
    for o in found.opportunities:
        if o.team is None:
            continue  # about no one team (a commitment to add): in the top list, not a team's row
        t = teams.setdefault((o.team, o.billing_currency), TeamMoney(o.team, o.billing_currency, {}))
        t.saving_window += o.saving_window
        t.saving_monthly += o.saving_monthly
    rate_rows = query(con, "waste_fx_rates") if has_table(con, "finance", "fx_rates") else []
    reporting = rate_rows[0][4] if rate_rows else None
    in_reporting = _in_reporting(ledger, low, found, rate_rows) if rate_rows else []
    trend_start, trend_end = trend_window(start, end)
    daily = [Utilisation(*r) for r in query(con, "org_utilisation", start=trend_start, end=trend_end)]
    period: dict[str | None, Utilisation] = {}
    for u in daily:
        if start <= u.day <= end:
            acc = period.setdefault(u.cluster, Utilisation(u.cluster, None, 0.0, 0.0, 0.0, 0.0))
            acc.billed += u.billed
            acc.allocated += u.allocated
            acc.productive += u.productive
            acc.idle += u.idle
    span = con.execute("SELECT min(day), max(day) FROM marts.fct_cost_daily").fetchone()
    team_names = {t for t, _ in teams}
    return OrgReport(start, end, label, trend_start, trend_end,
                     sorted(teams.values(), key=lambda t: (t.team, t.currency)), reporting, in_reporting,
                     daily, list(period.values()), found, links(out_dir, team_names), span[0], span[1])


def _in_reporting(ledger: list[tuple], low: list[tuple], found: savings.Savings,
                  rate_rows: list[tuple]) -> list[InReporting]:
    """Each team's total, waste, under-use and monthly savings in the reporting currency: the ledger's
    total and waste by fx.convert, the under-use at the same rates of its currency and month, savings
    as finance.savings_opportunities converted them. A currency without a rate is named, not added."""
    rate_of = {(c, m): r for c, m, r, _, _ in rate_rows}
    out: dict[str, InReporting] = {}
    by_team: dict[str, list[tuple]] = {}
    for row in ledger:
        by_team.setdefault(row[1], []).append(row)
    with localcontext() as ctx:
        ctx.prec = 80
        for team, rows in by_team.items():
            totals: ReportingTotals = convert(rows, rate_rows)
            r = out.setdefault(team, InReporting(team))
            r.total, missing = totals.total
            r.waste, _ = totals.waste
            r.missing += [c for c, _ in missing]
        for team, currency, month, cost in low:
            rate = rate_of.get((currency, month)) or rate_of.get((currency, None))
            r = out.setdefault(team, InReporting(team))
            if rate is None:
                if cost and currency not in r.missing:
                    r.missing.append(currency)
            else:
                r.low_activity_cost += (cost or Decimal(0)) * rate
        for o in found.opportunities:
            if o.team is None:
                continue
            r = out.setdefault(o.team, InReporting(o.team))
            if o.saving_monthly_reporting is None:
                if o.billing_currency not in r.missing:
                    r.missing.append(o.billing_currency)
            else:
                r.saving_monthly += o.saving_monthly_reporting
    return [out[t] for t in sorted(out)]


def links(out_dir: Path, teams: set[str]) -> dict[str, list[str]]:
    """The labels of each team's HTML reports in the folder (newest first), for the page's links."""
    found = {}
    for team in teams:
        folder = Path(out_dir) / file_name(team)
        labels = sorted((p.stem for p in folder.glob("*.html")), reverse=True) if folder.is_dir() else []
        if labels:
            found[team] = labels
    return found


WASTE_LABELS = {k: ledger_categories.BY_NAME[k].label for k in WASTE_KINDS}
