"""The published warehouse and its finance views, checked against independent sums over the marts and
against the bill computed from the landing files."""

import re
from datetime import date
from decimal import Decimal

import duckdb
import pytest

from tests.bill_truth import day_shares
from tests.conftest import PROJECT_ROOT
from tests.e2e import run_pipeline, simulate_and_run


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    root = tmp_path_factory.mktemp("finance")
    run = simulate_and_run(root, date(2026, 10, 30), 3, 4, seed=9)
    return run


@pytest.fixture(scope="module")
def published(ledger):
    path = ledger.warehouse.with_name(f"{ledger.warehouse.stem}.published.duckdb")
    assert path.exists()
    return path


def test_reconciliation_is_exact_every_day(ledger, published):
    bill = day_shares(ledger.landing)
    with duckdb.connect(str(published), read_only=True) as con:
        rows = con.execute(
            """SELECT day, bill_effective_cost, bill_billed_cost, allocated_effective_cost, allocated_billed_cost,
                      difference_effective_cost, difference_billed_cost FROM finance.reconciliation_daily ORDER BY day"""
        ).fetchall()
    assert [r[0] for r in rows] == ledger.days
    for day, be, bb, ae, ab, de, db in rows:
        assert (be, bb) == bill[day] == (ae, ab)
        assert de == 0 and db == 0


def test_monthly_views_equal_sums_over_the_marts(published):
    with duckdb.connect(str(published), read_only=True) as con:
        chargeback = con.execute(
            "SELECT month, team, project, category, effective_cost, billed_cost FROM finance.chargeback_monthly ORDER BY ALL"
        ).fetchall()
        by_hand = con.execute(
            """SELECT strftime(day, '%Y-%m'), team, project, category, sum(effective_cost), sum(billed_cost)
               FROM marts.fct_cost_daily GROUP BY ALL ORDER BY ALL"""
        ).fetchall()
        assert chargeback == by_hand
        monthly = con.execute(
            "SELECT invoice_month, allocated_effective_cost, difference_effective_cost, difference_billed_cost "
            "FROM finance.reconciliation_monthly ORDER BY 1"
        ).fetchall()
        assert [m[0] for m in monthly] == ["2026-10", "2026-11"]
        assert all(m[2] == 0 and m[3] == 0 for m in monthly)
        unit = con.execute(
            "SELECT project, sum(tokens_kept), sum(effective_cost) FROM finance.unit_economics_monthly GROUP BY 1 ORDER BY 1"
        ).fetchall()
        runs = con.execute(
            "SELECT project, sum(tokens_kept), sum(effective_cost) FROM marts.fct_run_efficiency_daily GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert unit == runs and unit


def test_budget_burn_thresholds(ledger, tmp_path):
    config = tmp_path / "config.yaml"
    with duckdb.connect(str(ledger.warehouse.with_name(f"{ledger.warehouse.stem}.published.duckdb")), read_only=True) as con:
        spent = dict(con.execute(
            "SELECT project, sum(effective_cost) FROM marts.fct_cost_daily WHERE day >= '2026-11-01' GROUP BY 1"
        ).fetchall())
    top = max(spent, key=spent.get)
    # budgets that put the top project at 25 %, 40 %, 60 % and 100 % of its November spend
    budgets = {"under 30%": spent[top] * 4, "30%": spent[top] / Decimal("0.4"), "50%": spent[top] / Decimal("0.6"),
               "80%": spent[top]}
    for expected, budget in budgets.items():
        config.write_text(ledger.config.read_text() + f"\nbudgets:\n  {top}: {budget:.2f}\n")
        assert not run_pipeline(ledger.landing, ledger.warehouse, config, [ledger.days[-1]])
        with duckdb.connect(str(ledger.warehouse.with_name(f"{ledger.warehouse.stem}.published.duckdb")), read_only=True) as con:
            rows = con.execute(
                "SELECT threshold_reached, spent FROM finance.budget_burn WHERE month = '2026-11' AND project = $p", {"p": top}
            ).fetchall()
        assert rows == [(expected, spent[top])], (expected, rows)


def test_readme_finance_queries_run(published):
    readme = (PROJECT_ROOT / "README.md").read_text()
    queries = re.findall(r"```sql\n(.*?)```", readme, re.S)
    assert len(queries) == 4
    with duckdb.connect(str(published), read_only=True) as con:
        results = [con.execute(q).fetchall() for q in queries]
    reconciliation, chargeback, unit_economics, budgets = results
    assert len(reconciliation) == 3 and all(r[4] == 0 and r[5] == 0 for r in reconciliation)
    assert chargeback and all(charged >= (waste or 0) for _, _, charged, waste in chargeback)
    assert unit_economics
    # budgets come from whichever config ran last (the budget test sets some): only thresholds reached
    assert all(threshold != "under 30%" and pct >= 30 for _, _, _, _, _, pct, threshold, _ in budgets)


def test_publishing_swaps_the_file_under_a_reader(ledger, published):
    reader = duckdb.connect(str(published), read_only=True)
    before = reader.execute("SELECT count(*) FROM marts.fct_cost_daily").fetchall()
    assert not run_pipeline(ledger.landing, ledger.warehouse, ledger.config, [ledger.days[0]])
    # the open reader keeps the file it opened; a new one sees the new file; neither blocked the run
    assert reader.execute("SELECT count(*) FROM marts.fct_cost_daily").fetchall() == before
    reader.close()
    with duckdb.connect(str(published), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM finance.reconciliation_daily").fetchall()[0][0] == len(ledger.days)
