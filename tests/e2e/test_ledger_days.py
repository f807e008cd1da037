"""The ledger's days: they start at `ledger.start` or the first day the landing's bills and jobs cover,
a 2018 backfill runs, and a day outside them — or a landing folder with nothing to read — gets one
clear line, never a traceback. Run as a user runs it: the CLI in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from decimal import Decimal as D

import duckdb
import pytest

from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2018, 6, 18)


def _gpuledger(*args: str, home, today: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    env.pop("GPULEDGER_TODAY", None)
    if today:
        env["GPULEDGER_TODAY"] = today  # the clock the command reads, set by the test
    env.pop("GPULEDGER_LEDGER_START", None)   # the CLI decides it, as for a user
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def backfill(tmp_path_factory):
    """One node billed $4.00 an hour on 2018-06-18; job 7 of p1 holds it 00:00–12:00, busy."""
    L = Landing(tmp_path_factory.mktemp("days_2018"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"a1": "p1"}}
    L.node("n1")
    L.node_hours("n1", utc(2018, 6, 18), 24, D("4.00"))
    L.job("c1", "7", account="a1", start="2018-06-18T00:00:00", end="2018-06-18T12:00:00", state="COMPLETED",
          host="n1")
    L.telemetry("n1", [DAY], [Activity(utc(2018, 6, 18), utc(2018, 6, 18, 12), "7", True)])
    L.write()
    home = L.root / "dagster_home"
    home.mkdir()
    return L, home


def _run(L: Landing, home, *days: str, config=None, today: str | None = None) -> subprocess.CompletedProcess:
    return _gpuledger("run", "--landing", str(L.landing), "--config", str(config or L.config_path),
                      "--warehouse", str(L.warehouse), "--start", days[0], "--end", days[-1], home=home,
                      today=today)


def test_a_2018_day_runs_and_reconciles(backfill):
    L, home = backfill
    result = _run(L, home, "2018-06-18")
    assert result.returncode == 0, result.stderr[-3000:]
    with duckdb.connect(str(L.warehouse.with_name("warehouse.published.duckdb")), read_only=True) as con:
        rows = con.execute("SELECT day, bill_effective_cost, difference_effective_cost "
                           "FROM finance.reconciliation_daily").fetchall()
    assert rows == [(DAY, D("96"), 0)]


def test_a_day_before_the_first_one_gets_one_line(backfill):
    L, home = backfill
    result = _run(L, home, "2018-06-17", "2018-06-18")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "2018-06-17 is before the ledger's first day, 2018-06-18 (the earliest day the landing's bills and jobs "
        "cover; set ledger.start in the config to start earlier)")


def test_ledger_start_in_the_config_decides(backfill, tmp_path):
    L, home = backfill
    config = tmp_path / "late.yaml"
    config.write_text(L.config_path.read_text() + "ledger: {start: 2018-06-19}\n")
    result = _run(L, home, "2018-06-18", config=config)
    assert result.returncode == 2
    assert result.stderr.strip() == "2018-06-18 is before the ledger's first day, 2018-06-19 (ledger.start in the config)"


def test_a_day_not_over_yet_gets_one_line(backfill):
    L, home = backfill
    # the day the landing covers, on a clock where it is still that day
    result = _run(L, home, "2018-06-18", today="2018-06-18")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "2018-06-18 is not over yet: the ledger runs complete UTC days, up to 2018-06-17")


def test_today_set_wrong_is_one_line_naming_the_variable(backfill):
    L, home = backfill
    result = _run(L, home, "2018-06-18", today="18/06/2018")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "gpuledger run: $GPULEDGER_TODAY '18/06/2018' is not a date written YYYY-MM-DD, e.g. 2026-11-01"


def test_an_empty_landing_folder_lists_what_it_expects(tmp_path):
    (tmp_path / "landing").mkdir()
    result = _gpuledger("run", "--landing", str(tmp_path / "landing"), "--start", "2026-11-01",
                        "--warehouse", str(tmp_path / "w.duckdb"), home=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"no landing files under {tmp_path / 'landing'}: the ledger reads files named like")
    assert f"{tmp_path / 'landing' / 'bills/focus/**/*.csv'}" in result.stderr
    assert f"{tmp_path / 'landing' / 'scheduler/slurm/*/**/*.psv'}" in result.stderr


def test_the_parent_of_landing_is_pointed_at_landing(backfill):
    L, home = backfill
    result = _gpuledger("run", "--landing", str(L.root), "--start", "2018-06-18", "--warehouse",
                        str(L.root / "other.duckdb"), home=home)
    assert result.returncode == 2
    assert result.stderr.strip().endswith(f"did you mean {L.root / 'landing'}?")
