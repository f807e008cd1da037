"""How numbers and input values are written in reports.

Money stays `Decimal` from the warehouse to the page and is rounded once, half up, to the currency's
minor unit (the cent for most; whole yen, 3 decimals for the dinars), so a number in a report is the
ledger's exact sum as the bill would round it. Every amount is printed with its currency: a symbol
in front for the few everyone reads ($, €, £, ¥), else the ISO code after the number (1,234.56 NOK),
since "kr" or "$" alone is ambiguous.

Every string that came from input (team, project, job and user names, hostnames, run ids, causes)
goes through `esc` before it reaches HTML or SVG, text and attributes alike: job names are typed by
users.
"""

from __future__ import annotations

import html
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal

MINUS = "\u2212"  # a real minus sign: a hyphen is easy to miss in front of an amount
# Currencies printed with a symbol in front; every other one gets its ISO code after the number.
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}
# ISO 4217 minor units where they are not 2: an amount is shown as precisely as the currency is paid.
MINOR_UNITS = {
    **dict.fromkeys(("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV",
                     "XAF", "XOF", "XPF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
}


def esc(value: object) -> str:
    """HTML-escaped text, quotes included, so it is safe in element text and in attribute values."""
    return html.escape("" if value is None else str(value), quote=True)


def minor_unit(currency: str | None) -> Decimal:
    """The smallest amount the currency is written in: 0.01 for most, 1 for JPY, 0.001 for KWD."""
    return Decimal(1).scaleb(-MINOR_UNITS.get(currency or "", 2))


def rounded(value: Decimal | None, currency: str | None) -> Decimal:
    """The amount rounded once, half up, to the currency's minor unit."""
    return (value or Decimal(0)).quantize(minor_unit(currency), rounding=ROUND_HALF_UP)


def _with_currency(sign: str, number: str, currency: str | None) -> str:
    if currency in SYMBOLS:
        return f"{sign}{SYMBOLS[currency]}{number}"
    return f"{sign}{number} {currency}" if currency else f"{sign}{number}"


def money(value: Decimal | None, currency: str | None) -> str:
    """$1,234.56, €1,234.56, ¥1,235, 1,234.56 NOK (−$74.05 for credits); no currency: the number alone."""
    amount = rounded(value, currency)
    return _with_currency(MINUS if amount < 0 else "", f"{abs(amount):,}", currency)


def money_short(value: float, currency: str | None) -> str:
    """Axis labels: $0, $950, $12.5k, $1.2M, 12.5k NOK."""
    sign = MINUS if value < 0 else ""
    v = abs(value)
    if v >= 1e6:
        return _with_currency(sign, f"{v / 1e6:.3g}M", currency)
    if v >= 1e3:
        return _with_currency(sign, f"{v / 1e3:.3g}k", currency)
    return _with_currency(sign, f"{v:.3g}", currency) if v else _with_currency("", "0", currency)


def currency_list(currencies: list[str]) -> str:
    """"NOK", "EUR and USD", "EUR, NOK and USD"."""
    if len(currencies) <= 1:
        return "".join(currencies)
    return ", ".join(currencies[:-1]) + " and " + currencies[-1]


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
