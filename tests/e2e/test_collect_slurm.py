"""`gpuledger collect slurm` against a real one-node Slurm 22.05 cluster (munged, MariaDB, slurmdbd,
slurmctld, slurmd, started here: tests/support/slurm_cluster.py), then the ledger built from what it
collected.

Real jobs are submitted — completed, failed, cancelled, timed out, requeued, an array, holding GPUs —
and what the test knows of them (the ids sbatch gave, what each was made to do) is checked against
marts.fct_job_cost; start and end times against what sacct itself says. A first collect runs while the
timed-out job is still running; the collect after it ends re-delivers the day's file, and the ledger
still has each job once, now ended."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone

import dagster as dg
import duckdb
import pytest

from tests.conftest import PROJECT_ROOT
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Landing
from tests.support.slurm_cluster import SlurmCluster, missing_programs

pytestmark = pytest.mark.slow

_missing = missing_programs()
if _missing or os.geteuid() != 0:
    pytest.skip(f"real Slurm test skipped: needs root and {', '.join(_missing) or 'nothing else'} "
                "(make system-deps installs slurm-wlm slurmdbd mariadb-server munge)", allow_module_level=True)

ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "REQUEUED", "NODE_FAIL", "OUT_OF_MEMORY")


def _sacct(c: SlurmCluster) -> list[dict]:
    """The allocations sacct knows (no steps), every instance of a requeued job, times as epoch seconds."""
    out = c.run("env", "SLURM_TIME_FORMAT=%s", "sacct", "-a", "-X", "-D", "-P",
                "--format=JobIDRaw,JobID,State,AllocTRES,Start,End").stdout.splitlines()
    header = out[0].split("|")
    return [dict(zip(header, line.split("|"))) for line in out[1:]]


def _wait(what: str, ready, timeout: float, c: SlurmCluster) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout:.0f}s\n{_sacct(c)}\n{c.logs()}")
        time.sleep(1)


def _state(c: SlurmCluster, job_id: str) -> str:
    return c.run("squeue", "-h", "-j", job_id, "-o", "%T", check=False).stdout.strip()


def _collect(L: Landing, c: SlurmCluster) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "pipelines.cli", "collect", "slurm", "--landing", str(L.landing),
                           "--cluster", c.name, "--config", str(L.config_path)],
                          capture_output=True, text=True, timeout=120, cwd=PROJECT_ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc


def _ledger(L: Landing, day: date) -> list:
    """The ledger of `day`, today: its daily partition exists only once the day is over, so the
    partitions are loaded as they will be just after midnight."""
    with dg.partition_loading_context(effective_dt=datetime.combine(day + timedelta(days=1), datetime.min.time(),
                                                                    tzinfo=timezone.utc)):
        return run_pipeline(L.landing, L.warehouse, L.config_path, [day])


def _jobs(L: Landing) -> list[tuple]:
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        return con.execute("""SELECT job_id, state, gpus, epoch(start_ts)::BIGINT, epoch(end_ts)::BIGINT, job_uid
                              FROM marts.fct_job_cost ORDER BY job_uid""").fetchall()


def test_collect_slurm_from_a_real_cluster_into_the_ledger(tmp_path):
    began = time.monotonic()
    (tmp_path / "slurm").mkdir()
    with SlurmCluster(tmp_path / "slurm") as c:
        today = datetime.now(timezone.utc).date()
        L = Landing(tmp_path / "ledger")
        L.node(c.node, cluster=c.name, gpu_count=4)
        L.node_hours(c.node, datetime(today.year, today.month, today.day, tzinfo=timezone.utc), 24, "4")
        # sacct through launcher words: the config's command, pointed at this cluster
        L.config = {"collect": {"slurm": {"sacct": ["env", f"SLURM_CONF={c.base / 'slurm.conf'}", "sacct"]}}}
        L.write()

        # the time limit is checked every 30 s: the timed-out job ends 60–90 s after it starts
        timeout = c.sbatch("--time=1", "--gres=gpu:1", "--wrap", "sleep 300")
        completed = c.sbatch("--gres=gpu:2", "--wrap", "sleep 3")
        failed = c.sbatch("--gres=gpu:1", "--wrap", "sleep 2; exit 1")
        cancelled = c.sbatch("--gres=gpu:1", "--wrap", "sleep 120")
        # the first run is requeued by hand while it runs; the second (SLURM_RESTART_COUNT=1) ends quickly
        requeued = c.sbatch("--requeue", "--gres=gpu:1", "--wrap",
                            'if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 120; fi; sleep 2')
        array = c.sbatch("--array=0-2", "--gres=gpu:1", "--wrap", "sleep 3")
        _wait("cancelled and requeued jobs running", lambda: _state(c, cancelled) == _state(c, requeued) == "RUNNING",
              60, c)
        time.sleep(2)  # a second of run time at least, so start < end
        c.run("scancel", cancelled)
        c.run("scontrol", "requeue", requeued)

        expected = {completed: ("COMPLETED", 2), failed: ("FAILED", 1), cancelled: ("CANCELLED", 1),
                    **{f"{array}_{i}": ("COMPLETED", 1) for i in range(3)}}

        def all_but_timeout_ended() -> bool:
            rows = {r["JobID"]: r for r in _sacct(c)}
            return (all((rows.get(j, {}).get("State") or "?").split()[0] in ENDED for j in expected)
                    and [r["State"] for r in _sacct(c) if r["JobID"] == requeued] == ["REQUEUED", "COMPLETED"])
        _wait("jobs ended", all_but_timeout_ended, 90, c)

        # --- a collect while the timed-out job still runs -----------------------------------------
        assert _state(c, timeout) == "RUNNING"
        first = _collect(L, c)
        files = sorted(p.name for p in (L.landing / "scheduler" / "slurm" / c.name).iterdir())
        assert f"sacct-{today}.psv" in files and ".collect-state.json" in files
        assert not [f for f in files if f.endswith(".tmp")]
        assert not _ledger(L, today)
        running = [r for r in _jobs(L) if r[0] == timeout]
        assert [(r[1], r[4]) for r in running] == [("RUNNING", None)]
        count_before = len(_jobs(L))

        _wait("timed-out job ended", lambda: any(r["JobID"] == timeout and r["State"] == "TIMEOUT" for r in _sacct(c)),
              120, c)
        truth = _sacct(c)
        second = _collect(L, c)
        third = _collect(L, c)  # nothing changed since: every file as it was

    # --- the re-delivered day: every job once, as it ended ----------------------------------------
    assert f"sacct-{today}.psv: " in second.stdout and "written" in second.stdout
    assert not _ledger(L, today)
    jobs = _jobs(L)
    assert len(jobs) == count_before == len(expected) + 3  # + the timed-out job and both runs of the requeued one
    by_id: dict[str, list[tuple]] = {}
    for job_id, state, gpus, start, end, _uid in jobs:
        by_id.setdefault(job_id, []).append((state, gpus, start, end))
    for job_id, (state, gpus) in {**expected, timeout: ("TIMEOUT", 1)}.items():
        ((got_state, got_gpus, *_),) = by_id[job_id]
        assert (got_state, got_gpus) == (state, gpus), job_id
    assert sorted((s, g) for s, g, *_ in by_id[requeued]) == [("COMPLETED", 1), ("REQUEUED", 1)]
    # start and end as sacct itself says, per instance (a requeued job's runs told apart by their start)
    said = sorted((r["JobID"], r["State"].split()[0], int(r["Start"]), int(r["End"])) for r in truth)
    got = sorted((j, s, a, b) for j, rows in by_id.items() for s, _g, a, b in rows)
    assert got == said
    assert all(a < b for *_, a, b in got)

    assert "(0 written, 3 unchanged)" in third.stdout
    print(first.stdout, second.stdout, third.stdout, f"whole test {time.monotonic() - began:.0f}s", sep="\n")
