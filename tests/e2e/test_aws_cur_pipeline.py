"""A real AWS CUR export through the whole daily run: staged beside FOCUS, reconciled to the cent."""

import json
import shutil
import subprocess
import sys
from datetime import date
from decimal import Decimal

import duckdb

from tests.support.pipeline import run_pipeline

CUR_EFFECTIVE_TOTAL = Decimal("1.68230869740")  # the CUR's own sum of lineItem/UnblendedCost (tests/unit/test_aws_cur.py)


def test_real_cur_runs_and_reconciles(real, tmp_path):
    landing = tmp_path / "landing"
    (landing / "bills" / "aws_cur").mkdir(parents=True)
    shutil.copy(real / "cur" / "aws_cur_legacy_sample_anonymized.csv", landing / "bills" / "aws_cur" / "cur.csv")

    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "inspect", "--landing", str(landing), "--json"],
                          capture_output=True, text=True)
    report = json.loads(proc.stdout)
    assert set(report) == {"aws_cur"}
    assert (report["aws_cur"]["rows"], report["aws_cur"]["quarantined"]) == (1281, 0)
    assert Decimal(report["aws_cur"]["effective_cost"]) == CUR_EFFECTIVE_TOTAL

    days = [date(2023, 11, 14), date(2023, 11, 15)]
    assert not run_pipeline(landing, tmp_path / "w.duckdb", None, days)
    with duckdb.connect(str(tmp_path / "w.published.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT day, bill_effective_cost, difference_effective_cost, difference_billed_cost "
                           "FROM finance.reconciliation_daily ORDER BY day").fetchall()
        sources = con.execute("SELECT DISTINCT source FROM ops.landed_files").fetchall()
    assert [r[0] for r in rows] == days
    assert all(r[1] > 0 and r[2] == 0 and r[3] == 0 for r in rows)
    assert sources == [("aws_cur",)]
