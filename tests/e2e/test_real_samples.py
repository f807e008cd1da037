"""`gpuledger inspect --json` on every real sample of ../shared/data/real, each laid out as a landing
zone: the documented fields, and counts and totals derived from the files by hand (see each README)."""

import json
import shutil
import subprocess
import sys
from decimal import Decimal

import pytest

from tests.unit.test_slurm_parser import HB_COLUMNS


def _inspect(landing, config=None):
    args = [sys.executable, "-m", "pipelines.cli", "inspect", "--landing", str(landing), "--json"]
    if config:
        args += ["--config", str(config)]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _land(tmp_path, src, dest):
    target = tmp_path / "landing" / dest
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, target)
    return tmp_path / "landing"


def test_focus_sample(real, tmp_path):
    report = _inspect(_land(tmp_path, real / "focus" / "focus_1_0_sample_1000.csv", "bills/focus/sample.csv"))
    f = report["focus"]
    assert (f["files"], f["rows"], f["quarantined"], f["reasons"]) == (1, 1000, 0, [])
    # README: billing period 2024-09; space-separated timestamps read as UTC
    assert f["first_charge"].startswith("2024-09") and f["last_charge"].startswith("2024-10-01")
    assert Decimal(f["effective_cost"]) > 0 and Decimal(f["billed_cost"]) > 0


def test_cur_sample(real, tmp_path):
    report = _inspect(_land(tmp_path, real / "cur" / "aws_cur_legacy_sample_anonymized.csv", "bills/aws_cur/cur.csv"))
    c = report["aws_cur"]
    assert (c["rows"], c["quarantined"]) == (1281, 0)  # README: 1,281 rows, Usage + Tax
    assert Decimal(c["effective_cost"]) == Decimal(c["billed_cost"]) == Decimal("1.68230869740")
    assert c["first_charge"].startswith("2023-11-01")


def test_slurm_sample(real, tmp_path):
    landing = _land(tmp_path, real / "slurm" / "hb-jobinfo_sacct_snowman_delimited.txt",
                    "scheduler/slurm/habrok/sacct.txt")
    config = tmp_path / "config.yaml"
    config.write_text("clusters:\n  habrok:\n    timezone: Europe/Amsterdam\n    delimiter: \"\u2603\"\n"
                      f"    columns: [{', '.join(HB_COLUMNS)}]\n")
    s = _inspect(landing, config)["slurm"]
    # README: 242 lines = 100 allocations + their steps; nothing is bad
    assert (s["files"], s["rows"], s["quarantined"], s["jobs"], s["steps"]) == (1, 242, 0, 100, 142)
    assert s["gpu_seconds"] > 0


def test_dcgm_scrape(real, tmp_path):
    d = _inspect(_land(tmp_path, real / "dcgm" / "nvidia_cloud_native_docs_a100_mig_scrape.prom",
                       "telemetry/dcgm/scrape.prom"))["dcgm"]
    # README: 21 series of one A100 (17 whole-GPU, 4 of a MIG instance) on host ub20-a100-k8s, one scrape
    assert (d["rows"], d["quarantined"], d["hosts"], d["gpus"], d["samples"]) == (21, 0, 1, 1, 2)
    assert d["first_ts"] == d["last_ts"]


@pytest.mark.parametrize("name", ["dcgm-exporter_default-counters.csv"])
def test_metric_definition_files_are_not_telemetry(real, tmp_path, name):
    # the exporter's metric-selection CSVs are not samples: landed by mistake, the file is refused whole
    d = _inspect(_land(tmp_path, real / "dcgm" / name, f"telemetry/dcgm/{name}"))["dcgm"]
    assert d["quarantined"] == 1 and d["reasons"][0]["first_row"] == "file"
