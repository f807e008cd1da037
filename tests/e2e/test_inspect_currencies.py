"""`inspect` never adds two currencies: one currency gives totals, several give `by_currency`; a bill
without BillingCurrency takes the configured default, and says how many rows did."""

import json
import subprocess
import sys
from decimal import Decimal

from pipelines.ingest import focus
from pipelines.lib.config import OrgConfig
from pipelines.cli.inspect import inspect_landing
from tests.support.memory_db import memory_db

CUR_HEADER = ("identity/LineItemId,lineItem/LineItemType,lineItem/UsageStartDate,lineItem/UsageEndDate,"
              "lineItem/CurrencyCode,lineItem/UnblendedCost\n")
FOCUS_HEADER = "x_LineItemId,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost"


def _cur_line(line_id: str, currency: str, cost: str) -> str:
    return f"{line_id},Usage,2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,{currency},{cost}\n"


def _inspect_cli(landing) -> dict:
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "inspect", "--landing", str(landing), "--json"],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def test_a_nok_file_and_a_usd_file_are_reported_apart(tmp_path):
    bills = tmp_path / "bills" / "aws_cur"
    bills.mkdir(parents=True)
    (bills / "nok.csv").write_text(CUR_HEADER + _cur_line("n1", "NOK", "100.5")
                                   + _cur_line("n2", "NOK", "0.0007458096045417008"))
    (bills / "usd.csv").write_text(CUR_HEADER + _cur_line("u1", "USD", "1.25") + _cur_line("u2", "USD", "2E-1"))
    cur = _inspect_cli(tmp_path)["aws_cur"]
    assert cur["currencies"] == ["NOK", "USD"]
    assert "effective_cost" not in cur and "billed_cost" not in cur  # never a total across currencies
    nok, usd = cur["by_currency"]["NOK"], cur["by_currency"]["USD"]
    # exact sums of what the files write, by Python's decimal
    nok_total = Decimal("100.5") + Decimal("0.0007458096045417008")
    assert Decimal(nok["effective_cost"]) == Decimal(nok["billed_cost"]) == nok_total
    assert Decimal(usd["effective_cost"]) == Decimal("1.45")
    assert Decimal(nok["rounding"]["effective_cost"]) == Decimal("-2e-19")  # 0.000745809604541701 stored
    assert usd["rounding"] == {"effective_cost": "0", "billed_cost": "0"}
    assert cur["default_currency_rows"] == {}


def test_eur_lines_inside_a_usd_file(tmp_path):
    bills = tmp_path / "bills" / "focus"
    bills.mkdir(parents=True)
    (bills / "mixed.csv").write_text(
        FOCUS_HEADER + ",BillingCurrency\n"
        "a,2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,10,9,USD\n"
        "b,2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,3.5,3.5,EUR\n"
        "c,2026-11-02T01:00:00Z,2026-11-02T02:00:00Z,Usage,1,1,USD\n"
    )
    report = inspect_landing(tmp_path, OrgConfig())["focus"]
    assert report["currencies"] == ["EUR", "USD"] and "effective_cost" not in report
    usd = report["by_currency"]["USD"]
    assert (usd["effective_cost"], usd["billed_cost"]) == ("10", "11")
    assert report["by_currency"]["EUR"]["effective_cost"] == "3.5"


def test_a_bill_without_billing_currency_takes_the_default_and_says_so(tmp_path):
    bills = tmp_path / "bills" / "focus"
    bills.mkdir(parents=True)
    path = bills / "plain.csv"
    path.write_text(FOCUS_HEADER + "\n"
                    "a,2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,1.5,1.5\n"
                    "b,2026-11-02T01:00:00Z,2026-11-02T02:00:00Z,Usage,2,2\n"
                    "c,2026-11-02T01:00:00Z,2026-11-02T02:00:00Z,Usage,x,2\n")  # quarantined: counted too
    report = inspect_landing(tmp_path, OrgConfig())["focus"]
    assert (report["currencies"], report["default_currency_rows"], report["effective_cost"]) == (["USD"], {"USD": 3}, "3.5")
    report = inspect_landing(tmp_path, OrgConfig(default_currency="NOK"))["focus"]
    assert (report["currencies"], report["default_currency_rows"]) == (["NOK"], {"NOK": 3})
    # the parser fills it, so staging never holds a NULL currency
    parsed = focus.parse(memory_db(), path, "bills/focus/plain.csv", default_currency="NOK")
    assert parsed.rows["billing_currency"].to_list() == ["NOK", "NOK"]
    assert parsed.defaulted == {"billing_currency": {"NOK": 3}}
    # the quarantined row carries the same default, explicitly
    assert parsed.rejects["billing_currency"].to_list() == ["NOK"]


def test_a_blank_currency_on_some_rows_takes_the_default_for_those_rows(tmp_path):
    bills = tmp_path / "bills" / "aws_cur"
    bills.mkdir(parents=True)
    (bills / "cur.csv").write_text(CUR_HEADER + _cur_line("a", "USD", "1") + _cur_line("b", "", "2"))
    report = inspect_landing(tmp_path, OrgConfig())["aws_cur"]
    assert (report["currencies"], report["default_currency_rows"], report["effective_cost"]) == (["USD"], {"USD": 1}, "3")
