"""`gpuledger inspect` against what the simulator says it wrote, and on a broken file."""

import json
import subprocess
import sys
from datetime import date
from decimal import Decimal

import pytest

from simulator import simulate


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect")
    manifest = simulate(root, date(2026, 11, 2), 2, nodes=4, seed=2)
    return root, manifest


def _inspect(*args):
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "inspect", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_json_matches_what_the_simulator_wrote(sim):
    root, manifest = sim
    report = json.loads(_inspect("--landing", str(root / "landing"), "--config", str(root / "gpuledger.yaml"), "--json"))
    assert set(report) == {"focus", "slurm", "dcgm", "runs", "inventory", "plans", "costing", "storage"}
    for name, source in report.items():
        assert name == "costing" or {"files", "rows", "quarantined"} <= set(source)
    focus = report["focus"]
    assert (focus["files"], focus["rows"], focus["quarantined"]) == (manifest["focus"]["files"], manifest["focus"]["rows"], 0)
    # the two exports (AWS in USD, west's GPU cloud in EUR) are two reports: each has its own current delivery
    # of the month, the other deliveries are superseded
    assert focus["deliveries"]["current"] == len(manifest["focus"]["current_files"]) == 2
    assert focus["deliveries"]["superseded"] == manifest["focus"]["deliveries"] - 2
    assert focus["first_charge"] and focus["last_charge"]
    assert report["slurm"]["rows"] == manifest["slurm"]["rows"]
    # the billed fleet's jobs and those of the nodes the config costs (simulator/offbill.py)
    assert report["slurm"]["jobs"] == manifest["features"]["jobs"] + manifest["off_bill"]["jobs"]
    assert report["slurm"]["gpu_seconds"] > 0
    assert (report["plans"]["files"], report["plans"]["quarantined"]) == (manifest["plans"]["files"], 0)
    assert (report["storage"]["rows"], report["storage"]["quarantined"]) == (manifest["storage"]["objects"], 0)
    dcgm = report["dcgm"]
    assert (dcgm["rows"], dcgm["samples"], dcgm["hosts"], dcgm["gpus"]) == (
        manifest["dcgm"]["rows"], manifest["dcgm"]["samples"], manifest["dcgm"]["hosts"], manifest["dcgm"]["gpus"])
    runs = report["runs"]
    assert (runs["runs"], runs["events"], runs["tokens"]) == (
        manifest["runs"]["runs"], manifest["runs"]["events"], manifest["runs"]["tokens"])


def test_bill_money_per_currency_matches_what_the_simulator_wrote(sim):
    root, manifest = sim
    focus = json.loads(_inspect("--landing", str(root / "landing"), "--config", str(root / "gpuledger.yaml"), "--json"))["focus"]
    assert focus["currencies"] == manifest["focus"]["currencies"] == ["EUR", "USD"]
    assert "effective_cost" not in focus and "billed_cost" not in focus    # two currencies are never added
    for currency, want in manifest["focus"]["by_currency"].items():
        got = focus["by_currency"][currency]
        assert Decimal(got["effective_cost"]) == Decimal(want["effective_cost"]), currency
        assert Decimal(got["billed_cost"]) == Decimal(want["billed_cost"]), currency


def test_bad_rows_are_listed_with_file_and_row(tmp_path):
    bills = tmp_path / "bills" / "focus"
    bills.mkdir(parents=True)
    (bills / "b.csv").write_text(
        "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost\n"
        "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,1.25,1.25\n"
        "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,x,2\n"
    )
    report = json.loads(_inspect("--landing", str(tmp_path), "--json"))
    assert set(report) == {"focus"}
    assert (report["focus"]["rows"], report["focus"]["quarantined"], report["focus"]["effective_cost"]) == (2, 1, "1.25")
    (reason,) = report["focus"]["reasons"]
    assert reason == {"reason": "BilledCost 'x' is not a number", "rows": 1, "file": "bills/focus/b.csv", "first_row": "row 2"}
    text = _inspect("--landing", str(tmp_path))
    assert "BilledCost 'x' is not a number" in text and "bills/focus/b.csv row 2" in text


def test_the_summary_counts_superseded_deliveries_and_fits_80_columns(sim):
    """Month-to-date exports repeat every earlier delivery: routine, so counted in one line, and listed
    only with --verbose (they were a line of ~300 characters each)."""
    root, manifest = sim
    landing = ["--landing", str(root / "landing"), "--config", str(root / "gpuledger.yaml")]
    superseded = manifest["focus"]["deliveries"] - len(manifest["focus"]["current_files"])
    assert superseded > 0
    text = _inspect(*landing)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80, text
    assert f"           {superseded} deliveries superseded by later ones (--verbose lists them)" in lines
    assert "superseded by bills/" not in text
    verbose = _inspect(*landing, "--verbose")
    listed = [line for line in verbose.splitlines() if line.startswith("    bills/focus/")]
    assert len(listed) == superseded
