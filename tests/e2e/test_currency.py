"""Money in several currencies: a USD bill and a NOK bill landed together, and EUR lines inside the USD
file. Every money row carries its currency, every total is per currency, nothing adds two currencies,
and `fx:` rates give reporting-currency columns. Expected amounts are worked out by hand below.

Day 2026-11-02, two nodes of 8 GPUs, both in no pool:
- n1, billed in USD (usd.csv) at $10.00 an hour for 00:00–02:00. Job 101 (account a1 → p1, team ml)
  holds all 8 GPUs 00:00–01:00, busy; 01:00–02:00 no job: idle_unallocated, charged to `_unallocated`.
  usd.csv also has an untagged networking line of $3.00 (shared by USD GPU cost: all to p1), and two
  EUR lines: €5.00 of storage tagged p2 and €1.00 of tax (spread by EUR pre-tax cost: all to p2).
- n2, billed in NOK (nok.csv, a file without BillingCurrency, so the config's default_currency NOK)
  at 100.00 an hour for 00:00–02:00. Job 202 (account a2 → p2, team research) holds it both hours,
  busy. nok.csv also has 25.00 of tax (by NOK pre-tax cost: all to p2).
"""

from __future__ import annotations

import csv
from datetime import date
from decimal import Decimal as D

import duckdb
import pytest

from pipelines.exports import export_focus
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)
EXPECTED = {  # (currency, team, project, category) -> (effective cost, GPU-seconds)
    ("USD", "ml", "p1", "productive"): (D("10"), 28800.0),
    ("USD", "_unallocated", "_unallocated", "idle_unallocated"): (D("10"), 28800.0),
    ("USD", "ml", "p1", "shared"): (D("3"), 0.0),
    ("EUR", "research", "p2", "storage"): (D("5"), 0.0),
    ("EUR", "research", "p2", "tax"): (D("1"), 0.0),
    ("NOK", "research", "p2", "productive"): (D("200"), 57600.0),
    ("NOK", "research", "p2", "tax"): (D("25"), 0.0),
}
BILL = {"USD": D("23"), "EUR": D("6"), "NOK": D("225")}


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("currency"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}, "research": {"projects": ["p2"]}},
                "slurm_accounts": {"a1": "p1", "a2": "p2"}, "default_currency": "NOK",
                "fx": {"reporting_currency": "USD", "rates": [
                    {"currency": "EUR", "month": "2026-11", "rate": "1.08", "source": "test rate"},
                    {"currency": "NOK", "month": "2026-11", "rate": "0.09", "source": "test rate"}]}}
    L.node("n1")
    L.node("n2")
    L.node_hours("n1", utc(2026, 11, 2), 2, D("10.00"), currency="USD", file="usd.csv")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("3.00"), service="Networking", currency="USD",
           file="usd.csv")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("5.00"), service="Storage", tags={"project": "p2"},
           currency="EUR", file="usd.csv")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Tax", D("1.00"), currency="EUR", file="usd.csv")
    L.node_hours("n2", utc(2026, 11, 2), 2, D("100.00"), file="nok.csv")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Tax", D("25.00"), file="nok.csv")
    L.job("c1", "101", account="a1", start="2026-11-02T00:00:00", end="2026-11-02T01:00:00", state="COMPLETED",
          host="n1")
    L.job("c1", "202", account="a2", start="2026-11-02T00:00:00", end="2026-11-02T02:00:00", state="COMPLETED",
          host="n2")
    L.telemetry("n1", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 1), "101", True)])
    L.telemetry("n2", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 2), "202", True)])
    L.write()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    return L


def _published(L: Landing):
    return duckdb.connect(str(L.warehouse.with_name("warehouse.published.duckdb")), read_only=True)


def test_every_cost_row_is_in_its_own_currency(ledger):
    with _published(ledger) as con:
        rows = con.execute("""SELECT billing_currency, team, project, category, effective_cost, gpu_seconds
                              FROM marts.fct_cost_daily WHERE day = $day""", {"day": DAY}).fetchall()
    assert {(c, t, p, k): (e, s) for c, t, p, k, e, s in rows} == EXPECTED


def test_reconciliation_per_day_and_currency(ledger):
    with _published(ledger) as con:
        rows = con.execute("""SELECT billing_currency, bill_effective_cost, allocated_effective_cost,
                                     difference_effective_cost, difference_billed_cost
                              FROM finance.reconciliation_daily WHERE day = $day""", {"day": DAY}).fetchall()
        monthly = con.execute("""SELECT billing_currency, bill_effective_cost, difference_effective_cost
                                 FROM finance.reconciliation_monthly""").fetchall()
    assert {c: (b, a) for c, b, a, _, _ in rows} == {c: (v, v) for c, v in BILL.items()}
    assert all(de == 0 and db == 0 for *_, de, db in rows)
    assert {c: (b, d) for c, b, d in monthly} == {c: (v, 0) for c, v in BILL.items()}


def test_marts_with_money_carry_the_currency(ledger):
    with _published(ledger) as con:
        jobs = con.execute("SELECT job_id, billing_currency, effective_cost, gpu_seconds FROM marts.fct_job_cost "
                           "ORDER BY job_id").fetchall()
        idle = con.execute("SELECT hostname, billing_currency, effective_cost FROM marts.fct_idle_waste_daily").fetchall()
        for table in ("fct_cost_daily", "fct_job_cost", "fct_rerun_loss", "fct_idle_waste_daily", "fct_node_hourly",
                      "fct_run_efficiency_daily", "fct_bill_daily", "dim_projects"):
            columns = {r[0] for r in con.execute(f"DESCRIBE marts.{table}").fetchall()}
            assert "billing_currency" in columns, table
        for view in ("chargeback_monthly", "reconciliation_daily", "reconciliation_monthly", "unit_economics_monthly",
                     "budget_burn"):
            columns = {r[0] for r in con.execute(f"DESCRIBE finance.{view}").fetchall()}
            assert "billing_currency" in columns, view
    assert jobs == [("101", "USD", D("10"), 28800.0), ("202", "NOK", D("200"), 57600.0)]
    assert idle == [("n1", "USD", D("10"))]


def test_fx_rates_give_reporting_columns_and_never_add_currencies(ledger):
    with _published(ledger) as con:
        rows = con.execute("""SELECT billing_currency, sum(effective_cost), sum(effective_cost_reporting),
                                     any_value(reporting_currency), any_value(fx_source)
                              FROM finance.chargeback_monthly GROUP BY 1 ORDER BY 1""").fetchall()
    assert rows == [("EUR", D("6"), D("6.48"), "USD", "test rate"),
                    ("NOK", D("225"), D("20.25"), "USD", "test rate"),
                    ("USD", D("23"), D("23"), "USD", "identity")]


def test_the_focus_export_keeps_each_lines_currency(ledger, tmp_path):
    with duckdb.connect(str(ledger.warehouse), read_only=True) as con:
        export_focus(con, DAY, DAY, tmp_path / "focus.csv")
    totals: dict[str, D] = {}
    with (tmp_path / "focus.csv").open(newline="") as fh:
        for r in csv.DictReader(fh):
            totals[r["BillingCurrency"]] = totals.get(r["BillingCurrency"], D(0)) + D(r["EffectiveCost"])
    assert totals == BILL


def test_without_rates_nothing_is_converted(ledger, tmp_path):
    import shutil

    from pipelines.lib.config import OrgConfig
    from pipelines.lib.warehouse.publish import create_finance_views

    copy = tmp_path / "published.duckdb"
    shutil.copy(ledger.warehouse.with_name("warehouse.published.duckdb"), copy)
    with duckdb.connect(str(copy)) as con:
        create_finance_views(con, OrgConfig())   # no fx: rates
        rows = con.execute("SELECT DISTINCT effective_cost_reporting, reporting_currency "
                           "FROM finance.chargeback_monthly").fetchall()
    assert rows == [(None, None)]
