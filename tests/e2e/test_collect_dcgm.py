"""`gpuledger collect dcgm` against a real Prometheus (Debian's `prometheus` and `promtool`).

The simulator's DCGM telemetry for a small fleet-day, with a 3-minute scrape gap cut out of one host,
is loaded into a Prometheus server of the test's own. The collected files must hold exactly the
samples the server stores (the gap stays a gap), and the ledger built from them must equal, table for
table and row for row, the ledger built from the simulator's own files with the same gap.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import date, datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from tests.support.crash_support import PROJECT_ROOT, mart_rows
from tests.support.prometheus import missing_binaries, prometheus_server, write_openmetrics

if missing_binaries():
    pytest.skip(f"{' and '.join(missing_binaries())} not installed (make system-deps installs Debian's prometheus)",
                allow_module_level=True)

pytestmark = pytest.mark.slow

DAY = date(2026, 11, 2)
GAP_HOST = "east-gpu-001"
GAP = (datetime(2026, 11, 2, 10, 0, tzinfo=timezone.utc), datetime(2026, 11, 2, 10, 3, tzinfo=timezone.utc))
COLLECTED = f"telemetry/dcgm/collected/day={DAY}"


def _in_gap() -> pl.Expr:
    return (pl.col("hostname") == GAP_HOST) & pl.col("timestamp").is_between(*GAP, closed="left")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """(simulated root with the gap cut from its own files too, Prometheus URL)."""
    from simulator import simulate

    root = tmp_path_factory.mktemp("collect_dcgm")
    simulate(root / "sim", DAY, 1, nodes=2, seed=7)
    dcgm_files = sorted((root / "sim" / "landing" / "telemetry" / "dcgm").rglob("*.parquet"))
    write_openmetrics(dcgm_files, root / "dcgm.om", drop=_in_gap())
    # the simulator's own file loses the same samples, so both ledgers see the same gap
    gap_file = next(f for f in dcgm_files if f.stem == GAP_HOST)
    kept = pl.read_parquet(gap_file).filter(~_in_gap())
    kept.write_parquet(gap_file)
    (root / "prom").mkdir()
    with prometheus_server(root / "dcgm.om", root / "prom") as url:
        yield root, url


def _collect(landing: Path, url: str, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", "collect", "dcgm", "--landing", str(landing),
                           "--prometheus", url, "--start", DAY.isoformat(), *extra],
                          capture_output=True, text=True, cwd=PROJECT_ROOT, env=env)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def collected(fleet):
    root, url = fleet
    landing = root / "collected"
    began = time.monotonic()
    done = _collect(landing, url)
    seconds = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    print(done.stdout, f"(the whole command: {seconds:.1f} s)")
    return landing, done.stdout


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort("timestamp", "hostname", "gpu", "metric", "hpc_job", nulls_last=True)


def test_collected_files_hold_exactly_the_stored_samples_and_the_gap_stays_a_gap(fleet, collected):
    root, url = fleet
    landing, stdout = collected
    sim = pl.read_parquet(root / "sim" / "landing" / "telemetry" / "dcgm" / f"day={DAY}" / "*.parquet")
    got = pl.read_parquet(landing / COLLECTED / "*.parquet")
    files = sorted(p.name for p in (landing / COLLECTED).iterdir())
    assert files == sorted(f"{h}.parquet" for h in sim["hostname"].unique())  # one file per host
    assert got.columns == ["timestamp", "hostname", "gpu", "UUID", "modelName", "metric", "value", "hpc_job",
                           "pod", "namespace", "GPU_I_ID"]
    assert _sorted(got.select(sim.columns)).equals(_sorted(sim))  # every value and time, bit for bit
    assert got.filter(_in_gap()).height == 0
    assert f"{DAY}: {len(files)} file(s), {len(files)} host(s), {sim.height:,} samples" in stdout

    # why raw samples: query_range at the scrape step fills the gap from the 5-minute lookback
    import urllib.parse
    import urllib.request
    params = {"query": f'DCGM_FI_DEV_GPU_UTIL{{Hostname="{GAP_HOST}",gpu="0"}}', "start": str(GAP[0].timestamp()),
              "end": str(GAP[1].timestamp() - 30), "step": "30s"}
    with urllib.request.urlopen(f"{url}/api/v1/query_range?{urllib.parse.urlencode(params)}") as resp:
        series = json.load(resp)["data"]["result"]
    invented = sum(len(s["values"]) for s in series)
    assert invented == 6, "query_range returns a point for each of the gap's 6 missing scrapes"


def test_a_recollect_replaces_each_file_with_the_same_bytes(fleet, collected):
    root, url = fleet
    landing, _ = collected
    before = _digests(landing / COLLECTED)
    done = _collect(landing, url, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["day"] == DAY.isoformat() and summary["hosts"] == len(before)
    assert _digests(landing / COLLECTED) == before


def test_a_collect_killed_midway_then_rerun_leaves_what_an_uninterrupted_one_does(fleet, collected):
    root, url = fleet
    expected = _digests(collected[0] / COLLECTED)
    landing = root / "killed"
    folder = landing / COLLECTED
    env = {**os.environ, "GPULEDGER_COLLECT_PAUSE_SECONDS": "30"}
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "collect", "dcgm", "--landing", str(landing),
                             "--prometheus", url, "--start", DAY.isoformat()],
                            cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (folder.is_dir() and any(p.suffix == ".parquet" for p in folder.iterdir())):
            assert proc.poll() is None and time.monotonic() < deadline, "no file appeared"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    written = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    assert 0 < len(written) < len(expected), written  # killed between files
    # what a kill in the middle of a write leaves: a temp file (no landing pattern reads it)
    (folder / f".{sorted(expected)[-1]}.tmp").write_bytes(b"PAR1 half a file")
    done = _collect(landing, url)
    assert done.returncode == 0, done.stderr
    assert _digests(folder) == expected  # the same files, byte-identical, and no temp file


def test_the_ledger_from_collected_telemetry_equals_the_ledger_from_the_simulators_files(fleet, collected):
    from tests.support.pipeline import run_pipeline

    root, url = fleet
    sim = root / "sim"
    baseline = root / "baseline"
    assert not run_pipeline(sim / "landing", baseline / "warehouse.duckdb", sim / "gpuledger.yaml", [DAY])

    # the same landing zone without the simulator's telemetry; the daily job collects it itself
    landing = root / "from_prometheus"
    shutil.copytree(sim / "landing", landing, ignore=shutil.ignore_patterns("dcgm"))
    config = root / "with_collect.yaml"
    config.write_text((sim / "gpuledger.yaml").read_text() + f"\ncollect:\n  prometheus:\n    url: {url}\n")
    ours = root / "ours"
    assert not run_pipeline(landing, ours / "warehouse.duckdb", config, [DAY])

    assert _digests(landing / COLLECTED) == _digests(collected[0] / COLLECTED)  # the asset = the command
    want, got = mart_rows(baseline / "warehouse.duckdb"), mart_rows(ours / "warehouse.duckdb")
    assert want.keys() == got.keys()
    for table in ("fct_job_cost", "fct_cost_daily"):
        assert want[table], f"{table} is empty: the comparison would prove nothing"
    for table in want:
        assert got[table] == want[table], table
