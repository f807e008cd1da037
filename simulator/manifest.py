"""Bill totals for the landing manifest, per billing currency (amounts in two currencies are never added):
overall and per UTC day, spreading multi-day lines by time.

A line whose charge period covers several UTC days contributes amount × (its seconds in the day) / (its total
seconds) to each day. Three renderings per currency, day and money column:
- `<col>_fraction`: the exact rational share as "p/q" (or "p"), summed over lines;
- `<col>`: the same value as a decimal string rounded half-even to 28 significant digits (the Decimal
  default context) - exact whenever the fraction terminates;
- `<col>_lr10`: each line split across its days by the largest-remainder method at 10 decimal places (units
  of 1e-10; remainders ranked largest first, ties to the earlier day), then summed per day. Σ over days of
  `_lr10` equals the column total exactly, like a pipeline that allocates at DECIMAL(.., 10).
"""
from __future__ import annotations

import datetime as dt
from decimal import Context, Decimal
from fractions import Fraction

UNIT = Decimal("1e-10")
CTX = Context(prec=28)


def _days(cps: dt.datetime, cpe: dt.datetime) -> list[tuple[dt.date, int]]:
    out = []
    d = cps.date()
    while True:
        a = max(cps, dt.datetime(d.year, d.month, d.day))
        nxt = d + dt.timedelta(days=1)
        b = min(cpe, dt.datetime(nxt.year, nxt.month, nxt.day))
        if b > a:
            out.append((d, int((b - a).total_seconds())))
        if b >= cpe:
            return out
        d = nxt


def _lr(units: int, weights: list[int]) -> list[int]:
    sign = -1 if units < 0 else 1
    units = abs(units)
    total = sum(weights)
    base = [units * w // total for w in weights]
    rem = [(units * w % total, -i) for i, w in enumerate(weights)]
    left = units - sum(base)
    for _, negi in sorted(rem, reverse=True)[:left]:
        base[-negi] += 1
    return [sign * b for b in base]


class CurrencyTotals:
    """The totals of the lines billed in one currency."""

    COLS = ("effective_cost", "billed_cost")

    def __init__(self):
        self.total = {c: Decimal(0) for c in self.COLS}
        self.frac: dict[dt.date, dict[str, Fraction]] = {}
        self.lr: dict[dt.date, dict[str, int]] = {}
        self.rows = 0
        self.split_lines = 0

    def add(self, effective: Decimal, billed: Decimal, cps: dt.datetime, cpe: dt.datetime) -> None:
        self.rows += 1
        days = _days(cps, cpe)
        if len(days) > 1:
            self.split_lines += 1
        secs = [s for _, s in days]
        for col, amount in (("effective_cost", effective), ("billed_cost", billed)):
            self.total[col] += amount
            units = int(amount / UNIT)
            assert Decimal(units) * UNIT == amount, amount
            for (d, s), u in zip(days, _lr(units, secs)):
                f = self.frac.setdefault(d, {c: Fraction(0) for c in self.COLS})
                f[col] += Fraction(amount) * s / sum(secs)
                lr = self.lr.setdefault(d, {c: 0 for c in self.COLS})
                lr[col] += u

    def as_dict(self) -> dict:
        days = {}
        for d in sorted(self.frac):
            out = {}
            for col in self.COLS:
                f = self.frac[d][col]
                out[col] = format(CTX.divide(Decimal(f.numerator), Decimal(f.denominator)), "f")
                out[f"{col}_fraction"] = str(f)
                out[f"{col}_lr10"] = format(Decimal(self.lr[d][col]) * UNIT, "f")
            days[d.isoformat()] = out
        return {
            "rows": self.rows,
            "effective_cost": format(self.total["effective_cost"], "f"),
            "billed_cost": format(self.total["billed_cost"], "f"),
            "lines_spanning_days": self.split_lines,
            "days": days,
        }


class BillTotals:
    """Every bill line's totals, kept apart per BillingCurrency."""

    def __init__(self):
        self.by_currency: dict[str, CurrencyTotals] = {}

    def add(self, currency: str, effective: Decimal, billed: Decimal, cps: dt.datetime, cpe: dt.datetime) -> None:
        self.by_currency.setdefault(currency, CurrencyTotals()).add(effective, billed, cps, cpe)

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.by_currency.values())

    def as_dict(self) -> dict:
        return {
            "rows": self.rows,
            "lines_spanning_days": sum(t.split_lines for t in self.by_currency.values()),
            "currencies": sorted(self.by_currency),
            "by_currency": {c: self.by_currency[c].as_dict() for c in sorted(self.by_currency)},
            "day_share_rounding": "see simulator/manifest.py: exact fraction, 28-significant-digit half-even "
                                  "decimal, and per-line largest remainder at 1e-10",
        }
