"""`kill -9` of a real `gpuledger run` at random moments, each followed by a run that must finish by
itself and publish marts identical, row for row, to those of a run nobody disturbed.

The kills land wherever they land: before Dagster starts, mid-ingest (a landing file is one
transaction), mid-way through a mart's DELETE + INSERT (DuckDB replays or drops its WAL), while the
published copy is being written (`.<published>.tmp`, which the next publish unlinks), or between
days. What each kill left is reported with the trial."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tests.support.crash_support import PROJECT_ROOT, Ledger, mart_rows, scratch_dir, simulate
from tests.support.depth import examples

TRIALS = examples(3)  # one round of WORKERS at once; make test-deep draws more
SEED = 20261102
WORKERS = 3  # trials at once: a run waits on its SQLite writes and its kill moment part of the time


@dataclass
class Trial:
    kill_after: float
    mid_write: bool  # then killed at the first moment from kill_after on that it holds the warehouse
    killed_at: float = 0.0
    left: str = ""
    recovered_in: float = 0.0


def _kill_and_recover(ledger: Ledger, trial: Trial, timeout: float) -> tuple[Trial, dict, str]:
    while not _kill(ledger, trial):  # the run was done before the moment came: an earlier one
        shutil.rmtree(ledger.root)
        ledger = Ledger(ledger.root, ledger.sim, ledger.days)
        trial.kill_after /= 2

    started = time.monotonic()
    done = ledger.run(timeout=timeout)
    trial.recovered_in = time.monotonic() - started
    assert done.returncode == 0, f"{trial}: {done.stderr[-2000:]}"
    assert not (ledger.root / f".{ledger.published.name}.tmp").exists(), trial
    with ledger.instance() as instance:
        statuses = {r.run_id: r.status.value for r in instance.get_runs()}
    # the killed run, if it had begun, is marked failed: nothing shows as running any more
    assert set(statuses.values()) <= {"SUCCESS", "FAILURE"}, (trial, statuses)
    return trial, mart_rows(ledger.published), done.stderr


def _kill(ledger: Ledger, trial: Trial) -> bool:
    """Starts a run and kills it with SIGKILL at the trial's moment; False if it ended before."""
    victim = _start_in_own_group(ledger)
    started = time.monotonic()
    time.sleep(trial.kill_after)
    # Most of a run's time goes to Dagster's own bookkeeping between writes; a kill at a random
    # moment rarely lands inside one, so some trials wait for the next write to begin.
    while trial.mid_write and victim.poll() is None and _lock_holder(ledger) != victim.pid:
        time.sleep(0.01)
    if victim.poll() is not None:
        return False
    os.killpg(victim.pid, signal.SIGKILL)
    trial.killed_at = time.monotonic() - started
    victim.wait()
    trial.left = _what_the_kill_left(ledger, victim.pid)
    return True


def _start_in_own_group(ledger: Ledger) -> subprocess.Popen:
    """The run in a process group of its own, so the kill reaches anything it may have started."""
    return subprocess.Popen(ledger.run_command(), env=ledger.env(), cwd=PROJECT_ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _lock_holder(ledger: Ledger) -> int | None:
    """The pid the warehouse's lock file names (a holder empties it when it lets go)."""
    try:
        return json.loads(ledger.warehouse.with_name(ledger.warehouse.name + ".lock").read_text() or "{}").get("pid")
    except (OSError, ValueError):
        return None


def _what_the_kill_left(ledger: Ledger, pid: int) -> str:
    with ledger.instance() as instance:
        done = sum(r.status.value == "SUCCESS" for r in instance.get_runs())
    left = [name for name, there in (
        (f"{done} of 2 days done", True),
        ("its name in the lock file (killed mid-write)", _lock_holder(ledger) == pid),
        ("a WAL", ledger.warehouse.with_name(ledger.warehouse.name + ".wal").exists()),
        ("a half-written published copy", (ledger.root / f".{ledger.published.name}.tmp").exists()),
        ("a published file", ledger.published.exists()),
    ) if there]
    return ", ".join(left)


@pytest.mark.slow
def test_runs_killed_at_random_moments_leave_nothing_that_changes_the_next_run():
    with scratch_dir("gpuledger-kill-") as root:
        sim = simulate(root / "sim", days=2)

        undisturbed = Ledger(root / "undisturbed", sim, days=2)
        started = time.monotonic()
        done = undisturbed.run(timeout=600)
        full = time.monotonic() - started
        assert done.returncode == 0, done.stderr[-2000:]
        want = mart_rows(undisturbed.published)
        assert want["fct_cost_daily"], "the simulated fleet produced no ledger rows"

        rng = random.Random(SEED)
        # Moments over the whole run, startup included; trials run WORKERS at a time, each slower.
        trials = [Trial(round(rng.uniform(0.05, 0.9) * full * 1.3, 2), mid_write=i % 2 == 0) for i in range(TRIALS)]
        ledgers = [Ledger(root / f"trial{i}", sim, days=2) for i in range(TRIALS)]
        timeout = max(180.0, 8 * full)
        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(lambda lt: _kill_and_recover(*lt, timeout), zip(ledgers, trials)))

        report = "\n".join(
            f"  kill -9 at {t.killed_at:5.2f}s (drawn {t.kill_after:5.2f}s{', then the next write' if t.mid_write else ''};"
            f" an undisturbed run takes {full:.1f}s): {t.left}; the next run finished in {t.recovered_in:.1f}s"
            for t, _, _ in results)
        print(f"\n{report}")
        for trial, got, _ in results:
            assert got.keys() == want.keys(), trial
            for table in want:
                assert got[table] == want[table], f"marts.{table} differs after {trial}"
