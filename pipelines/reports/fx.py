"""The report's money in the config's reporting currency, beside the bill's (docs/operations.md#commands).

With `fx:` rates in the config (finance.fx_rates in the published warehouse), each currency's total
and waste are converted at the rate of their currency and month — amount × rate, exact in `Decimal`,
rounded once where shown — and summed over currencies into a grand total in the reporting currency.
A currency with no rate for a month it has cost in is not converted and is never added: its amount is
named beside the converted sum ("no rate"). Without `fx:` rates (or in a warehouse without the
finance views) nothing is converted and the report says nothing of it. Days of different months
convert at their own month's rate, though a report's period is one day or one month.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, localcontext

from models import ledger_categories


@dataclass(frozen=True)
class Rate:
    currency: str
    month: str | None  # YYYY-MM; None: the reporting currency itself, at 1 in every month
    rate: Decimal      # units of the reporting currency per unit of `currency`
    source: str


@dataclass
class Converted:
    """One billing currency's total and waste over the period, and the same in the reporting currency
    (None where a month with cost in it has no rate)."""
    currency: str
    reporting_currency: str
    total: Decimal = Decimal(0)
    waste: Decimal = Decimal(0)
    rates: list[Rate] = field(default_factory=list)  # those used, one a month (the identity for the reporting currency)
    missing_months: list[str] = field(default_factory=list)  # months with cost in this currency and no rate for it
    total_reporting: Decimal | None = Decimal(0)
    waste_reporting: Decimal | None = Decimal(0)


@dataclass
class ReportingTotals:
    reporting_currency: str
    by_currency: dict[str, Converted] = field(default_factory=dict)

    def _sum(self, attr: str) -> tuple[Decimal, list[tuple[str, Decimal]]]:
        """The converted amounts added up, and the (currency, amount) pairs that could not be: a zero
        amount converts to zero at any rate, so it is never missing."""
        added, missing = Decimal(0), []
        with localcontext() as ctx:
            ctx.prec = 80
            for c in self.by_currency.values():
                converted = getattr(c, f"{attr}_reporting")
                if converted is not None:
                    added += converted
                elif getattr(c, attr):
                    missing.append((c.currency, getattr(c, attr)))
        return added, missing

    @property
    def total(self) -> tuple[Decimal, list[tuple[str, Decimal]]]:
        return self._sum("total")

    @property
    def waste(self) -> tuple[Decimal, list[tuple[str, Decimal]]]:
        return self._sum("waste")


def convert(ledger: list[tuple], rate_rows: list[tuple]) -> ReportingTotals | None:
    """Each currency's total and waste of the report's ledger rows (day, team, project, category,
    currency, gpu_seconds, effective_cost, billed_cost), converted month by month at the rates of
    sql/reports/waste_fx_rates.sql; None without rates."""
    if not rate_rows:
        return None
    rate_of = {(c, m): Rate(c, m, r, s) for c, m, r, s, _ in rate_rows}
    out = ReportingTotals(rate_rows[0][4])
    with localcontext() as ctx:
        ctx.prec = 80  # sums of DECIMAL(38,18) and their products with a rate, all exact
        by_month: dict[tuple[str, str], list[Decimal]] = {}
        for day, _, _, category, currency, _, effective, _ in ledger:
            if currency is None:
                continue
            acc = by_month.setdefault((currency, day.strftime("%Y-%m")), [Decimal(0), Decimal(0)])
            acc[0] += effective
            if category in ledger_categories.WASTE:
                acc[1] += effective
        for (currency, month), (total, waste) in sorted(by_month.items()):
            c = out.by_currency.setdefault(currency, Converted(currency, out.reporting_currency))
            c.total += total
            c.waste += waste
            rate = rate_of.get((currency, month)) or rate_of.get((currency, None))
            if rate is None:
                c.missing_months.append(month)
                c.total_reporting = c.waste_reporting = None
            elif not c.missing_months:
                if rate not in c.rates:
                    c.rates.append(rate)
                c.total_reporting += total * rate.rate
                c.waste_reporting += waste * rate.rate
        return out
