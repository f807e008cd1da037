"""A report's money in the reporting currency (pipelines/reports/fx.py): each month at its own rate,
exactly; a currency lacking a rate for a month it has cost in is not converted and never added."""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

from pipelines.reports.fx import convert

RATES = [("EUR", "2026-10", D("1.07"), "ECB", "USD"), ("EUR", "2026-11", D("1.08"), "ECB", "USD"),
         ("JPY", "2026-11", D("0.006512345678901234"), "BoJ", "USD"), ("USD", None, D(1), "identity", "USD")]


def _row(day: str, category: str, currency: str, amount: str) -> tuple:
    return (date.fromisoformat(day), "ml", "p1", category, currency, 3600.0, D(amount), D(amount))


def test_each_month_converts_at_its_own_rate_exactly():
    ledger = [_row("2026-10-31", "productive", "EUR", "100.000000000000000001"),
              _row("2026-11-01", "failed_job", "EUR", "10"), _row("2026-11-01", "storage", "EUR", "0.5"),
              _row("2026-11-01", "idle_unallocated", "JPY", "123456789.123456789123456789"),
              _row("2026-11-01", "productive", "USD", "5")]
    t = convert(ledger, RATES)
    eur, jpy, usd = (t.by_currency[c] for c in ("EUR", "JPY", "USD"))
    assert eur.total == D("110.500000000000000001") and eur.waste == D(10)
    assert eur.total_reporting == D("100.000000000000000001") * D("1.07") + D("10.5") * D("1.08")
    assert eur.total_reporting == D("118.34000000000000000107")   # no digit lost
    assert eur.waste_reporting == D("10.80") and [r.month for r in eur.rates] == ["2026-10", "2026-11"]
    # 123456789.123456789123456789 × 0.006512345678901234, all 45 digits (a 28-digit context would round)
    assert jpy.total_reporting == D("803993.287179164684956790684152797397777626")
    assert usd.total_reporting == D(5) and usd.rates[0].source == "identity"
    total, missing = t.total
    assert total == D("804116.627179164684956791754152797397777626") and missing == []   # the three, exactly


def test_a_month_without_a_rate_leaves_the_currency_unconverted_and_out_of_the_sum():
    ledger = [_row("2026-11-01", "productive", "EUR", "10"), _row("2026-12-01", "productive", "EUR", "1"),
              _row("2026-11-01", "storage", "NOK", "1234.5"), _row("2026-11-01", "productive", "USD", "5")]
    t = convert(ledger, RATES)
    assert t.by_currency["EUR"].missing_months == ["2026-12"] and t.by_currency["EUR"].total_reporting is None
    assert t.by_currency["NOK"].total_reporting is None and t.by_currency["NOK"].waste == 0
    assert t.total == (D(5), [("EUR", D(11)), ("NOK", D("1234.5"))])
    assert t.waste == (D(0), [])   # no waste anywhere: zero needs no rate


def test_without_rates_nothing_is_converted():
    assert convert([_row("2026-11-01", "productive", "EUR", "10")], []) is None
