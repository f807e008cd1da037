"""Issue 22 end to end: bill files whose money was lost or misread while the day said complete with
difference 0. Day 2026-11-02 has a line with a latin-1 byte ($19), a line whose currency is `usd`
($2), a line in a made-up currency (XYZ 4) and two lines at the per-line limit (just under 1e12
each); every one of them is on the bill side and in the ledger (as unattributed where quarantined),
so the day reconciles. Day 2026-11-03's second bill file names EffectiveCost twice: it is refused,
and the day it covers (read from its charge period, its name saying none) is not complete."""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import pytest

from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Landing

DAY1, DAY2 = date(2026, 11, 2), date(2026, 11, 3)
MAX = D("999999999999.999999999999999999")  # the largest amount a line may have (docs/landing.md)
HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ResourceName,BillingCurrency\n"


def _line(day: date, cost, name: str = "n", currency: str = "USD") -> str:
    return f"{day}T00:00:00Z,{day}T01:00:00Z,Usage,{cost},{cost},{name},{currency}\n"


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("bill_integrity"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "quarantine": {"max_share": 1.0}}
    L.write()
    bills = L.landing / "bills" / "focus"
    bills.mkdir(parents=True, exist_ok=True)
    (bills / "nov.csv").write_bytes(
        HEADER.encode() + _line(DAY1, 21).encode() + _line(DAY1, 19, name="caf\u00e9-node").encode("latin-1")
        + _line(DAY1, 2, currency="usd").encode() + _line(DAY1, 4, currency="XYZ").encode()
        + (_line(DAY1, MAX) * 2).encode() + _line(DAY2, 5).encode())
    (bills / "dup.csv").write_text(  # its name says no day: its rows do
        "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ResourceName,EffectiveCost\n"
        f"{DAY2}T00:00:00Z,{DAY2}T01:00:00Z,Usage,31.50,31.50,n,3000\n")
    failed = run_pipeline(L.landing, L.warehouse, L.config_path, [DAY1, DAY2])
    assert not failed, failed
    import duckdb

    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        recon = {(r[0], r[1]): r for r in con.sql(
            "SELECT day, billing_currency, bill_billed_cost, difference_billed_cost, difference_effective_cost, "
            "complete, unreadable_bill_file_names, quarantined_billed_cost FROM finance.reconciliation_daily").fetchall()}
        quarantine = con.sql("SELECT file, row_ref, reason, billed_cost, billing_currency FROM ops.quarantine "
                             "WHERE origin = 'landing' ORDER BY file, row_ref").fetchall()
    return recon, quarantine


def test_every_readable_amount_of_the_day_is_on_the_bill_side_and_reconciles(ledger):
    recon, _ = ledger
    usd = recon[(DAY1, "USD")]
    # 21 + 19 + 2 + 2·MAX, written out (Python's Decimal would round the sum to 28 digits); it was
    # 21 + 2·MAX before: the latin-1 line's $19 was lost and `usd` was a currency of its own
    assert usd[2] == D("2000000000041.999999999999999998")
    assert usd[3] == 0 and usd[4] == 0 and usd[5] is True
    assert usd[7] == 19 + 2  # quarantined, still counted
    xyz = recon[(DAY1, "XYZ")]  # kept apart in its own (refused) currency, never added to USD
    assert (xyz[2], xyz[3]) == (4, 0)


def test_the_bad_lines_are_quarantined_naming_file_row_and_reason(ledger):
    _, quarantine = ledger
    by_row = {(f, r): (reason, cost, cur) for f, r, reason, cost, cur in quarantine}
    assert by_row[("bills/focus/nov.csv", "row 2")] == (
        "ResourceName is not UTF-8: byte 0xE9 at byte 3 of its value (read as U+FFFD)", 19, "USD")
    assert by_row[("bills/focus/nov.csv", "row 3")][0].startswith("BillingCurrency 'usd' is not an ISO 4217")
    assert by_row[("bills/focus/nov.csv", "row 4")][1:] == (4, "XYZ")


def test_a_bill_file_with_a_column_named_twice_is_refused_and_its_day_is_not_complete(ledger):
    recon, quarantine = ledger
    dup = "bills/focus/dup.csv"
    (reason,) = [r for f, ref, r, _, _ in quarantine if f == dup and ref == "file"]
    assert reason.startswith(f"file {dup}: column EffectiveCost appears twice (columns 5 and 7)")
    day2 = recon[(DAY2, "USD")]
    assert day2[5] is False and dup in day2[6]  # was: 31.50 booked, complete with difference 0
