"""How numbers and input values are written in reports.

Money stays `Decimal` from the warehouse to the page and is rounded once, half up, to the cent, so a
number in a report is the ledger's exact sum as an accountant would round it. Every string that came
from input (team, project, job and user names, hostnames, run ids, causes) goes through `esc` before
it reaches HTML or SVG, text and attributes alike: job names are typed by users (DESIGN §7).
"""

from __future__ import annotations

import html
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")
MINUS = "\u2212"  # a real minus sign: a hyphen is easy to miss in front of a dollar amount


def esc(value: object) -> str:
    """HTML-escaped text, quotes included, so it is safe in element text and in attribute values."""
    return html.escape("" if value is None else str(value), quote=True)


def cents(value: Decimal | None) -> Decimal:
    return (value or Decimal(0)).quantize(CENT, rounding=ROUND_HALF_UP)


def money(value: Decimal | None) -> str:
    """$1,234.56 (−$74.05 for credits)."""
    c = cents(value)
    return f"{MINUS if c < 0 else ''}${abs(c):,}"


def money_short(value: float) -> str:
    """Axis labels: $0, $950, $12.5k, $1.2M."""
    sign = MINUS if value < 0 else ""
    v = abs(value)
    if v >= 1e6:
        return f"{sign}${v / 1e6:.3g}M"
    if v >= 1e3:
        return f"{sign}${v / 1e3:.3g}k"
    return f"{sign}${v:.3g}" if v else "$0"


def pct(part: Decimal | float | None, whole: Decimal | float | None, digits: int = 1) -> str:
    if part is None or not whole:
        return "–"
    share = Decimal(str(part)) / Decimal(str(whole)) * 100
    return f"{share.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)}%"


def ratio_pct(value: float | None, digits: int = 1) -> str:
    """A ratio such as MFU (0.321) as a percentage (32.1%); None (not measured) as a dash."""
    return "–" if value is None else f"{value * 100:.{digits}f}%"


def gpu_hours(seconds: float | None) -> str:
    return f"{(seconds or 0) / 3600:,.1f}"


def tokens(value: int | None) -> str:
    if value is None:
        return "–"
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if value >= size:
            return f"{value / size:,.2f}{unit}"
    return f"{value:,}"


def when(value: datetime | date | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return value.isoformat()


def plain_decimal(value: Decimal | None) -> str:
    """An exact decimal string without exponent (DuckDB hands back zero as Decimal('0E-18'))."""
    return "" if value is None else format(value, "f")
