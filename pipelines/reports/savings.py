"""What to do: the savings opportunities of a report's period (marts.fct_savings_opportunities,
docs/ledger.md#savings-opportunities), read once here and written as plain text for every renderer
(the team report's "What to do" section, HTML and Markdown, and the organisation page's top savings).

A period report (a day, a month) uses the rows of the period's last day the mart has rows for: the
trailing window ending there. Money stays in the currency it was billed in, with the reporting
currency beside it where `fx:` has a rate (finance.savings_opportunities); two currencies are never
added. A GPU-second's money is saved by at most one opportunity, so a team's opportunities of one
currency add up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

import duckdb

from pipelines.lib.warehouse import has_table
from pipelines.reports.data import query
from pipelines.reports.fmt import money, when


@dataclass
class Opportunity:
    day: date
    window_start: date
    window_days: int
    opportunity_id: str
    kind: str
    subject_type: str
    subject: str | None
    team: str | None
    project: str | None
    user_name: str | None
    cluster: str | None
    gpu_hours: float | None
    evidence: str
    action: str
    billing_currency: str
    saving_window: Decimal
    saving_monthly: Decimal
    reporting_currency: str | None
    saving_window_reporting: Decimal | None
    saving_monthly_reporting: Decimal | None


@dataclass
class Savings:
    """The opportunities of one period (one team's, or everyone's), largest first; `available` is False
    in a warehouse built before the mart existed."""
    available: bool
    start: date
    end: date
    opportunities: list[Opportunity] = field(default_factory=list)

    @property
    def window(self) -> tuple[date, date] | None:
        o = self.opportunities[0] if self.opportunities else None
        return (o.window_start, o.day) if o else None

    def totals(self) -> dict[str, tuple[Decimal, Decimal]]:
        """Per billing currency: (saving over the window, per month)."""
        out: dict[str, tuple[Decimal, Decimal]] = {}
        for o in self.opportunities:
            w, m = out.get(o.billing_currency, (Decimal(0), Decimal(0)))
            out[o.billing_currency] = (w + o.saving_window, m + o.saving_monthly)
        return dict(sorted(out.items()))


def load(con: duckdb.DuckDBPyConnection, start: date, end: date, team: str | None = None) -> Savings:
    """Team `team`'s opportunities (None: all of them, those of no one team included) of [start, end]."""
    if has_table(con, "finance", "savings_opportunities"):
        rows = query(con, "savings_opportunities", start=start, end=end, team=team)
    elif has_table(con, "marts", "fct_savings_opportunities"):
        rows = query(con, "savings_opportunities_unconverted", start=start, end=end, team=team)
    else:
        return Savings(False, start, end)
    return Savings(True, start, end, [Opportunity(*r) for r in rows])


SHOWN = 10  # rows of a team's "What to do"; the rest are counted in one line (rest_text)
HEADERS = ["what to do", "evidence", "saving over the window", "per month"]


def amount_text(value: Decimal, currency: str, reporting: Decimal | None, reporting_currency: str | None) -> str:
    """"€4,427.51 (= $4,781.71)": the bill's currency, and the reporting currency where it differs."""
    text = money(value, currency)
    if reporting is not None and reporting_currency and reporting_currency != currency:
        text += f" (= {money(reporting, reporting_currency)})"
    return text


def rows(s: Savings, limit: int | None = None) -> list[list[str]]:
    """Plain-text cells in HEADERS order, largest first (the first `limit`)."""
    return [[o.action, o.evidence,
             amount_text(o.saving_window, o.billing_currency, o.saving_window_reporting, o.reporting_currency),
             amount_text(o.saving_monthly, o.billing_currency, o.saving_monthly_reporting, o.reporting_currency)]
            for o in s.opportunities[:limit]]


def rest_text(s: Savings, limit: int) -> str:
    """"12 smaller opportunities not listed: $123.45 over the window ($529.07 a month)", per currency."""
    rest = Savings(s.available, s.start, s.end, s.opportunities[limit:])
    if not rest.opportunities:
        return ""
    money_text = "; ".join(f"{money(w, c)} over the window ({money(m, c)} a month)" for c, (w, m) in rest.totals().items())
    return f"{len(rest.opportunities)} smaller opportunities not listed: {money_text}."


def intro(s: Savings, who: str) -> str:
    """The sentence above the list, or the one line that says there is nothing to do (or no mart)."""
    if not s.available:
        return ("This warehouse has no marts.fct_savings_opportunities (it was built before savings "
                "opportunities existed): run `gpuledger run` again for the days to get them.")
    if not s.opportunities:
        return f"No savings opportunities for {who} in the window ending in {_period(s)}: nothing to do."
    first, last = s.window
    days = s.opportunities[0].window_days
    return (f"What {who} could have saved over the {days}-day window from {when(first)} to {when(last)} (the "
            "window ending on the period's last day with opportunities; only the days of it the ledger has "
            "count), largest first; per month: 30 days at the rate of those days. Each GPU-hour's money is "
            "counted by one opportunity only.")


def _period(s: Savings) -> str:
    return when(s.start) if s.start == s.end else f"{when(s.start)} to {when(s.end)}"
