"""Errors a person can act on: each names the file, day or key and says what to do, and no traceback
reaches the user for a bad input, a bad config or a full disk. Run as a user runs the command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from simulator import simulate

DAY = "2026-11-02"


def _gpuledger(*args: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    env.pop("GPULEDGER_LEDGER_START", None)
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd)


@pytest.fixture(scope="module")
def sim(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("errors")
    from datetime import date

    simulate(root / "sim", date(2026, 11, 2), 1, nodes=2, seed=4)
    (root / "home").mkdir()
    return root


def _run(sim: Path, warehouse: Path, *extra: str, config: Path | None = None) -> subprocess.CompletedProcess:
    return _gpuledger("run", "--landing", str(sim / "sim" / "landing"), "--config",
                      str(config or sim / "sim" / "gpuledger.yaml"), "--warehouse", str(warehouse),
                      "--start", DAY, *extra, home=sim / "home")


def test_a_full_disk_says_so_and_what_to_do(sim, tmp_path):
    disk = tmp_path / "small_disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3M", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        result = _run(sim, disk / "w.duckdb")
    finally:
        subprocess.run(["umount", str(disk)], check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "No space left on device: the disk holding the warehouse is full; free space and run the day again" \
        in result.stderr
    assert "max_share" not in result.stderr


def test_too_much_quarantined_points_at_the_files_and_the_setting(sim, tmp_path):
    sacct = max((sim / "sim" / "landing" / "scheduler" / "slurm").rglob("*.psv"), key=lambda p: p.stat().st_size)
    broken = tmp_path / "landing"
    subprocess.run(["cp", "-r", str(sim / "sim" / "landing"), str(broken)], check=True)
    target = broken / sacct.relative_to(sim / "sim" / "landing")
    lines = target.read_text().splitlines()
    # every other record loses its field separators: quarantined, the rest of the file still dates it
    body = [line.replace("|", "¦") if i % 2 else line for i, line in enumerate(lines[1:])]
    target.write_text("\n".join([lines[0], *body]) + "\n")
    result = _gpuledger("run", "--landing", str(broken), "--config", str(sim / "sim" / "gpuledger.yaml"),
                        "--warehouse", str(tmp_path / "w.duckdb"), "--start", DAY, home=sim / "home")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "check slurm_kubernetes_contract" in result.stderr
    assert "of the day's landing rows were quarantined, over the 5% allowed; see why with `gpuledger inspect`" \
        in result.stderr


def test_a_missing_dagster_home_is_named(sim, tmp_path):
    result = _gpuledger("run", "--landing", str(sim / "sim" / "landing"), "--start", DAY,
                        "--warehouse", str(tmp_path / "w.duckdb"), home=tmp_path / "nowhere")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"DAGSTER_HOME={tmp_path / 'nowhere'} is not a folder: create it")


def test_report_writes_under_the_current_directory(sim, tmp_path):
    assert _run(sim, sim / "w.duckdb").returncode == 0
    result = _gpuledger("report", "--team", "pretrain", "--day", DAY, "--warehouse",
                        str(sim / "w.published.duckdb"), home=sim / "home", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data" / "reports" / "pretrain" / f"{DAY}.html").is_file()
