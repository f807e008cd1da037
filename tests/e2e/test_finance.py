"""The published warehouse and its finance views, checked against independent sums over the marts and
against the bill computed from the landing files. The simulated fleet has two bills: AWS in USD (east and
the shared lines) and west's GPU cloud in EUR, so every check is per day (or month) and currency."""

import re
import shutil
from collections import defaultdict
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, localcontext

import yaml

import duckdb
import pytest

from pipelines.lib.config.strict_yaml import dump_yaml, load_yaml

from tests.support.bill_truth import day_shares
from tests.conftest import PROJECT_ROOT
from tests.support.pipeline import run_pipeline, simulate_and_run


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


def _bill_of_processed_days(ledger) -> dict[tuple[date, str], tuple[Decimal, Decimal]]:
    return {k: v for k, v in day_shares(ledger.landing).items() if k[0] in ledger.days}


def test_reconciliation_is_exact_every_day_and_currency(ledger, published):
    bill = _bill_of_processed_days(ledger)
    assert {c for _, c in bill} == {"EUR", "USD"}
    with duckdb.connect(str(published), read_only=True) as con:
        rows = con.execute(
            """SELECT day, billing_currency, bill_effective_cost, bill_billed_cost, allocated_effective_cost,
                      allocated_billed_cost, difference_effective_cost, difference_billed_cost, complete,
                      config_effective_cost, config_billed_cost
               FROM finance.reconciliation_daily ORDER BY day, billing_currency"""
        ).fetchall()
    assert [(r[0], r[1]) for r in rows] == sorted(bill)
    for day, currency, be, bb, ae, ab, de, db, complete, ce, cb in rows:
        # the simulated fleet's on-prem and GPU-cloud nodes are costed from the config, in USD
        assert (ce > 0) == (currency == "USD") and ce == cb, (day, currency)
        assert (be, bb) == bill[(day, currency)] == (ae - ce, ab - cb), (day, currency)
        assert de == 0 and db == 0 and complete


def test_monthly_reconciliation_is_exact_per_currency(ledger, published):
    want: dict[tuple[str, str], list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for (day, currency), (e, b) in _bill_of_processed_days(ledger).items():
        want[(f"{day:%Y-%m}", currency)][0] += e
        want[(f"{day:%Y-%m}", currency)][1] += b
    with duckdb.connect(str(published), read_only=True) as con:
        rows = con.execute(
            """SELECT invoice_month, billing_currency, bill_effective_cost, bill_billed_cost,
                      allocated_effective_cost, allocated_billed_cost, difference_effective_cost,
                      difference_billed_cost, config_effective_cost, config_billed_cost
               FROM finance.reconciliation_monthly ORDER BY 1, 2"""
        ).fetchall()
    assert [(m, c) for m, c, *_ in rows] == [("2026-10", "EUR"), ("2026-10", "USD"), ("2026-11", "EUR"),
                                           ("2026-11", "USD")]
    for month, currency, be, bb, ae, ab, de, db, ce, cb in rows:
        assert [be, bb] == want[(month, currency)] == [ae - ce, ab - cb], (month, currency)
        assert de == 0 and db == 0


def test_eur_chargeback_has_reporting_columns_at_the_configs_rate(ledger, published):
    rates = {(r["currency"], r["month"]): Decimal(r["rate"])
             for r in yaml.safe_load(ledger.config.read_text())["fx"]["rates"]}
    assert set(rates) == {("EUR", "2026-10"), ("EUR", "2026-11")}
    with duckdb.connect(str(published), read_only=True) as con:
        rows = con.execute(
            "SELECT month, billing_currency, effective_cost, effective_cost_reporting, reporting_currency, fx_source "
            "FROM finance.chargeback_monthly").fetchall()
    assert {c for _, c, *_ in rows} == {"EUR", "USD"}
    for month, currency, cost, reported, reporting_currency, source in rows:
        assert reporting_currency == "USD"
        if currency == "EUR":
            want = (cost * rates[("EUR", month)]).quantize(Decimal("1e-18"), rounding=ROUND_HALF_UP)
            assert reported == want and source == "simulated"
        else:
            assert reported == cost and source == "identity"
    with duckdb.connect(str(published), read_only=True) as con:
        units = con.execute("SELECT month, billing_currency, effective_cost, effective_cost_reporting "
                            "FROM finance.unit_economics_monthly").fetchall()
    assert units
    for month, currency, cost, reported in units:
        rate = rates[("EUR", month)] if currency == "EUR" else Decimal(1)
        assert reported == (cost * rate).quantize(Decimal("1e-18"), rounding=ROUND_HALF_UP)


def test_reporting_columns_are_exact_for_large_amounts_and_rates(published, tmp_path):
    """amount × rate rounded once to 1e-18 (half away from zero), however large either is: the product of two
    DECIMAL(38,18) has no room for an integer part, so a naive product overflows above 100."""
    from pipelines.lib.config import OrgConfig
    from pipelines.lib.warehouse.publish import create_finance_views

    copy = tmp_path / "published.duckdb"
    shutil.copy(published, copy)
    amounts = {"CHF": Decimal("-98765432109876543.987654321098765432"), "GBP": Decimal("0.000000000000000003"),
               "SEK": Decimal("123456.789012345678901234")}
    rates = {"CHF": "156.123456789012345678", "GBP": "0.5", "SEK": "0.000123456789012345"}
    cfg = OrgConfig.model_validate({"fx": {"reporting_currency": "JPY", "rates": [
        {"currency": c, "month": "2026-11", "rate": r, "source": "hand"} for c, r in rates.items()]}})
    with duckdb.connect(str(copy)) as con:
        for currency, amount in amounts.items():
            con.execute("""INSERT INTO marts.fct_cost_daily BY NAME
                           SELECT DATE '2026-11-01' AS day, 'hand' AS team, 'hand' AS project, 'productive' AS category,
                                  $c AS billing_currency, 'bill' AS cost_source, $a::DECIMAL(38, 18) AS effective_cost,
                                  $a::DECIMAL(38, 18) AS billed_cost, 0 AS gpu_seconds""",
                        {"c": currency, "a": str(amount)})
        create_finance_views(con, cfg)
        got = dict(con.execute("SELECT billing_currency, effective_cost_reporting FROM finance.chargeback_monthly "
                               "WHERE team = 'hand'").fetchall())
    with localcontext() as ctx:
        ctx.prec = 100
        want = {c: (a * Decimal(rates[c])).quantize(Decimal("1e-18"), rounding=ROUND_HALF_UP) for c, a in amounts.items()}
    assert got == want


def test_monthly_views_equal_sums_over_the_marts(published):
    with duckdb.connect(str(published), read_only=True) as con:
        chargeback = con.execute(
            "SELECT month, team, project, category, billing_currency, effective_cost, billed_cost "
            "FROM finance.chargeback_monthly ORDER BY ALL"
        ).fetchall()
        by_hand = con.execute(
            """SELECT strftime(day, '%Y-%m'), team, project, category, billing_currency, sum(effective_cost),
                      sum(billed_cost) FROM marts.fct_cost_daily GROUP BY ALL ORDER BY ALL"""
        ).fetchall()
        assert chargeback == by_hand
        monthly = con.execute(
            "SELECT invoice_month, allocated_effective_cost, difference_effective_cost, difference_billed_cost "
            "FROM finance.reconciliation_monthly ORDER BY 1"
        ).fetchall()
        assert sorted({m[0] for m in monthly}) == ["2026-10", "2026-11"]
        assert all(m[2] == 0 and m[3] == 0 for m in monthly)
        unit = con.execute(
            "SELECT project, billing_currency, sum(tokens_kept), sum(effective_cost) FROM finance.unit_economics_monthly "
            "GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
        runs = con.execute(
            "SELECT project, billing_currency, sum(tokens_kept), sum(effective_cost) FROM marts.fct_run_efficiency_daily "
            "GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
        assert unit == runs and unit


def test_budget_burn_thresholds(ledger, tmp_path):
    config = tmp_path / "config.yaml"
    # a budget without a currency is in the default currency, USD, and burnt by USD spend only
    with duckdb.connect(str(ledger.warehouse.with_name(f"{ledger.warehouse.stem}.published.duckdb")), read_only=True) as con:
        spent = dict(con.execute(
            "SELECT project, sum(effective_cost) FROM marts.fct_cost_daily "
            "WHERE day >= '2026-11-01' AND billing_currency = 'USD' GROUP BY 1"
        ).fetchall())
    top = max(spent, key=spent.get)
    # budgets that put the top project at 25 %, 40 %, 60 % and 100 % of its November spend
    budgets = {"under 30%": spent[top] * 4, "30%": spent[top] / Decimal("0.4"), "50%": spent[top] / Decimal("0.6"),
               "80%": spent[top]}
    for expected, budget in budgets.items():
        # the simulator's config has budgets of its own: this one replaces them (a second `budgets:` is refused)
        org = load_yaml(ledger.config.read_text()).data
        config.write_text(dump_yaml({**org, "budgets": {top: f"{budget:.2f}"}}))
        assert not run_pipeline(ledger.landing, ledger.warehouse, config, [ledger.days[-1]])
        with duckdb.connect(str(ledger.warehouse.with_name(f"{ledger.warehouse.stem}.published.duckdb")), read_only=True) as con:
            rows = con.execute(
                "SELECT threshold_reached, spent FROM finance.budget_burn WHERE month = '2026-11' AND project = $p", {"p": top}
            ).fetchall()
        assert rows == [(expected, spent[top])], (expected, rows)


def test_the_finance_pages_queries_run(published):
    page = (PROJECT_ROOT / "docs" / "finance.md").read_text()
    queries = re.findall(r"```sql\n(.*?)```", page, re.S)
    assert len(queries) == 4
    with duckdb.connect(str(published), read_only=True) as con:
        results = [con.execute(q).fetchall() for q in queries]
    reconciliation, chargeback, unit_economics, budgets = results
    # day, currency, bill, config, allocated, difference, complete
    assert len(reconciliation) == 3 * 2 and all(r[4] == r[2] + r[3] and r[5] == 0 and r[6] for r in reconciliation)
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
        # a row per day and currency (AWS in USD, west's GPU cloud in EUR)
        assert con.execute("SELECT count(*) FROM finance.reconciliation_daily").fetchall()[0][0] == 2 * len(ledger.days)
