"""What a killed `gpuledger run` leaves behind never blocks the next one (fast checks: the leftovers
are made by hand, the way a SIGKILL leaves them; test_kill_recovery.py kills real runs)."""

import socket
import subprocess
import sys
import uuid

import pytest

from tests.crash_support import Ledger, scratch_dir, simulate


@pytest.fixture(scope="module")
def sim():
    with scratch_dir("gpuledger-sim-") as root:
        yield simulate(root / "sim", days=1)


@pytest.fixture
def ledger(sim):
    with scratch_dir("gpuledger-ledger-") as root:
        yield Ledger(root, sim, days=1)


def _dead_pid() -> int:
    """The pid of a process that has exited."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def _leave_a_killed_run(ledger: Ledger) -> str:
    """What `kill -9` of a run in the middle of a warehouse write leaves: its run STARTED in the
    Dagster instance, holding the `duckdb_writer` pool's only slot (as runs did while the writers
    were in that pool), and its name in the warehouse's lock file."""
    from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

    pid = _dead_pid()
    run_id = str(uuid.uuid4())
    with ledger.instance() as instance:
        instance.add_run(DagsterRun(job_name="daily_ledger", run_id=run_id, status=DagsterRunStatus.STARTED,
                                    tags={"gpuledger/host": socket.gethostname(), "gpuledger/pid": str(pid),
                                          "gpuledger/process": "killed"}))
        storage = instance.event_log_storage
        storage.set_concurrency_slots("duckdb_writer", 1)
        storage.claim_concurrency_slot("duckdb_writer", run_id, "staging__stg_slurm__job_records")
    ledger.warehouse.with_name(ledger.warehouse.name + ".lock").write_text(
        f'{{"run_id": "{run_id}", "pid": {pid}, "host": "{socket.gethostname()}", '
        f'"since": "2026-11-03 06:00:01 UTC", "mode": "exclusive"}}')
    return run_id


@pytest.mark.xfail(strict=True, reason="the wedge: a killed run's pool claim blocks every later run")
def test_a_killed_runs_leftovers_do_not_block_the_next_run(ledger):
    dead = _leave_a_killed_run(ledger)
    done = ledger.run(timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert ledger.published.exists()
    with ledger.instance() as instance:
        assert instance.get_run_by_id(dead).status.value == "FAILURE"  # the dead run no longer shows as running
        info = instance.event_log_storage.get_concurrency_info("duckdb_writer")
        assert dead not in {slot.run_id for slot in info.claimed_slots}
