"""A bill format gpuledger does not ship is its parser and its declaration, nothing more: the toy
"provider ledger" of tests/support/toy_ledger.py, named in GPULEDGER_FORMATS, is read by the bills
asset, its lines are costed in marts.fct_cost_daily, its quarantined line keeps its money as
`unattributed`, and every day still reconciles to the bill per currency — no project file names it.

The pipeline runs in a subprocess so the added format is declared before the definitions load, as
it would be for `gpuledger run` with the variable set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal

import duckdb
import pytest

from tests.conftest import PROJECT_ROOT
from tests.support.scenario_builder import Activity, Landing, utc

NOV2 = utc(2026, 11, 2).date()
RATE = "4.1234567890123456789"   # 19 decimals: stored at 1e-18, the rest kept as rounding
STORED = Decimal("4.123456789012345679")
FILE = "bills/toy_ledger/2026-11-02.txt"


def _provider_ledger(L: Landing) -> None:
    lines = ["start;hours;node;team;amount;currency;category"]
    for h in range(24):
        lines.append(f"{(utc(2026, 11, 2) + timedelta(hours=h)):%Y-%m-%dT%H:%M:%SZ};1;n1;;{RATE};USD;Usage")
    lines.append("2026-11-02T00:00:00Z;24;;;10.01;EUR;Usage")   # no node: shared, not on a GPU
    lines.append("2026-11-02T00:00:00Z;24;;;2.5;EUR;Bogus")     # not a FOCUS category: quarantined, money kept
    path = L.landing / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def _gpuledger(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("toy-format"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "clusters": {"c1": {"timezone": "UTC"}}}
    L.node("n1")
    L.job("c1", "7001", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00",
          state="COMPLETED", host="n1")
    L.telemetry("n1", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 12), "7001", True)])
    L.write()
    _provider_ledger(L)
    env = {**os.environ, "GPULEDGER_FORMATS": "tests.support.toy_ledger", "PYTHONPATH": str(PROJECT_ROOT)}
    script = ("import sys; from datetime import date; from pathlib import Path; "
              "from tests.support.pipeline import run_pipeline; "
              f"failed = run_pipeline(Path({str(L.landing)!r}), Path({str(L.warehouse)!r}), "
              f"Path({str(L.config_path)!r}), [date(2026, 11, 2)]); print(failed); sys.exit(1 if failed else 0)")
    run = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return L, env


def _published(L: Landing) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(L.warehouse.with_name("warehouse.published.duckdb")), read_only=True)


def test_the_warehouse_knows_the_added_format_as_a_bill(world):
    L, _ = world
    with _published(L) as con:
        assert con.execute("SELECT staging_table, folder, is_bill, allocates FROM ops.landing_sources "
                           "WHERE source = 'toy_ledger'").fetchall() == [
            ("staging.stg_focus__bill_lines", "bills/toy_ledger", True, False)]
        assert con.execute("SELECT file, status, rows_staged, rows_quarantined FROM ops.landed_files "
                           "WHERE source = 'toy_ledger'").fetchall() == [(FILE, "current", 25, 1)]


def test_its_lines_are_costed_to_the_cent_and_beyond(world):
    L, _ = world
    with _published(L) as con:
        by_currency = dict(con.execute("SELECT billing_currency, sum(effective_cost) FROM marts.fct_cost_daily "
                                       "WHERE day = $d GROUP BY ALL", {"d": NOV2}).fetchall())
        ml = con.execute("SELECT sum(effective_cost) FROM marts.fct_cost_daily WHERE day = $d AND team = 'ml'",
                         {"d": NOV2}).fetchall()[0][0]
    assert by_currency == {"USD": 24 * STORED, "EUR": Decimal("12.51")}
    assert ml == 12 * STORED   # the job held all of n1's GPUs for 12 of the 24 billed hours


def test_its_quarantined_line_keeps_its_money_and_the_day_reconciles(world):
    L, _ = world
    with _published(L) as con:
        (row_ref, reason, cost, currency), = con.execute(
            "SELECT row_ref, reason, effective_cost, billing_currency FROM ops.quarantine "
            "WHERE source = 'toy_ledger' AND file = $f", {"f": FILE}).fetchall()
        days = con.execute(
            """SELECT billing_currency, bill_effective_cost, allocated_effective_cost, quarantined_effective_cost,
                      difference_effective_cost, difference_billed_cost, rounding_effective_cost, complete
               FROM finance.reconciliation_daily WHERE day = $d ORDER BY billing_currency""", {"d": NOV2}).fetchall()
    assert (row_ref, cost, currency) == ("row 26", Decimal("2.5"), "EUR") and "Bogus" in reason
    assert days == [
        ("EUR", Decimal("12.51"), Decimal("12.51"), Decimal("2.5"), 0, 0, 0, True),
        ("USD", 24 * STORED, 24 * STORED, 0, 0, 0, Decimal("-24e-19"), True),
    ]


def test_inspect_reads_the_added_format(world):
    L, env = world
    out = _gpuledger("inspect", "--landing", str(L.landing), "--config", str(L.config_path), "--json", env=env)
    assert out.returncode == 0, out.stderr
    entry = json.loads(out.stdout)["toy_ledger"]
    assert (entry["files"], entry["rows"], entry["quarantined"]) == (1, 26, 1), entry
    # the money as the file wrote it: 24 × 4.1234567890123456789, not its 1e-18 rounding
    assert entry["by_currency"]["USD"]["effective_cost"] == str(24 * Decimal(RATE))


@pytest.mark.parametrize("formats, said", [
    ("json", "GPULEDGER_FORMATS module 'json' declares no SOURCES"),
    ("tests.support.toy_ledgr", "GPULEDGER_FORMATS names module 'tests.support.toy_ledgr', which cannot be imported"),
    ("tests.support.toy_ledger,tests.support.toy_ledger", "GPULEDGER_FORMATS: source name(s) toy_ledger declared twice"),
])
def test_a_formats_module_that_cannot_serve_is_refused_in_a_sentence(world, formats, said):
    L, env = world
    out = _gpuledger("inspect", "--landing", str(L.landing), "--json", env={**env, "GPULEDGER_FORMATS": formats})
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"gpuledger inspect: {said}") and "Traceback" not in out.stderr, out.stderr


# A module written for the parser of before, (path, rel, cfg), wrapped in guard as the docs say: refused
# when declared, naming the source and the signature it needs, not on its first file deep in a sync.
EARLIER_PARSE = """
import dataclasses
from pipelines.ingest.plausible import guard
from tests.support import toy_ledger

def parse(path, rel, cfg):
    raise AssertionError("never called: the declaration is refused first")

SOURCES = (guard(dataclasses.replace(toy_ledger.SOURCES[0], name="earlier_ledger", parse=parse,
                                     summary_chunks=None)),)
"""


def test_a_parser_without_the_connection_is_refused_when_declared(world, tmp_path):
    L, env = world
    (tmp_path / "earlier_format.py").write_text(EARLIER_PARSE)
    env = {**env, "GPULEDGER_FORMATS": "earlier_format", "PYTHONPATH": f"{tmp_path}{os.pathsep}{env['PYTHONPATH']}"}
    out = _gpuledger("inspect", "--landing", str(L.landing), "--json", env=env)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith("gpuledger inspect: GPULEDGER_FORMATS module 'earlier_format': source "
                                 "'earlier_ledger' has a parse(path, rel, cfg), but a parser takes (con, path, "
                                 "rel, cfg)"), out.stderr
