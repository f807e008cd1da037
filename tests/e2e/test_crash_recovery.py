"""What a killed `gpuledger run` leaves behind never blocks the next one, a live writer does, and a
run waiting for it stops on SIGTERM and SIGINT. Fast checks: the leftovers of a kill are made by
hand, the way SIGKILL leaves them; test_kill_recovery.py kills real runs."""

import signal
import socket
import subprocess
import sys
import time
import uuid

import pytest

from tests.support.crash_support import PROJECT_ROOT, Ledger, scratch_dir, simulate


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
    were in that pool), its name in the warehouse's lock file, and half a published copy."""
    from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

    pid = _dead_pid()
    run_id = str(uuid.uuid4())
    with ledger.instance() as instance:
        instance.add_run(DagsterRun(job_name="daily_ledger", run_id=run_id, status=DagsterRunStatus.STARTED,
                                    tags={"gpuledger/host": socket.gethostname(), "gpuledger/pid": str(pid),
                                          "gpuledger/process": "killed"}))
        storage = instance.event_log_storage
        storage.set_concurrency_slots("duckdb_writer", 1)
        storage.claim_concurrency_slot("duckdb_writer", run_id, "staging__stg_scheduler__job_allocations")
    ledger.warehouse.with_name(ledger.warehouse.name + ".lock").write_text(
        f'{{"run_id": "{run_id}", "pid": {pid}, "host": "{socket.gethostname()}", '
        f'"since": "2026-11-03 06:00:01 UTC", "mode": "exclusive"}}')
    # the published file's half-written next version, as the killed process named it, and as an
    # earlier version (no pid) did
    for temp in (f".{ledger.published.name}.{pid}.tmp", f".{ledger.published.name}.tmp"):
        (ledger.root / temp).write_bytes(b"DUCK" + bytes(100))
    return run_id


def _hold_the_lock(ledger: Ledger) -> subprocess.Popen:
    """Another live process holding the warehouse's writer lock until it reads a line."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\n"
         "from pipelines.lib.warehouse.writer_lock import warehouse_lock\n"
         f"with warehouse_lock({str(ledger.warehouse)!r}, run_id='holder-run'):\n"
         "    print('held', flush=True)\n"
         "    sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    assert holder.stdout.readline().strip() == "held"
    return holder


def _read_until(stream, needle: str, count: int, timeout: float) -> list[str]:
    """Lines of `stream` up to the `count`-th that contains `needle` (tqdm's \r-redraws split too)."""
    seen, lines, deadline = 0, [], time.monotonic() + timeout
    buffer = ""
    while seen < count:
        assert time.monotonic() < deadline, f"no {count} × {needle!r} within {timeout}s: {lines[-5:]}"
        char = stream.read(1)
        assert char, f"the stream ended before {count} × {needle!r}: {lines[-5:]} {buffer!r}"
        if char in "\r\n":
            lines.append(buffer)
            seen += needle in buffer
            buffer = ""
        else:
            buffer += char
    return lines


def test_a_killed_runs_leftovers_are_cleared_and_a_live_writer_holds_the_next_run_back(ledger):
    dead = _leave_a_killed_run(ledger)
    holder = _hold_the_lock(ledger)
    run = ledger.start_run(GPULEDGER_LOCK_REPORT_SECONDS="0.5")
    try:
        said = _read_until(run.stderr, "waiting", count=3, timeout=60)
        waits = [line for line in said if "waiting" in line]
        # the live holder is the one named, and how long this run has waited grows
        assert all(f"held by run holder-run (pid {holder.pid}, since " in w for w in waits), waits
        assert all(f"(pid {run.pid}) goes on when it is released" in w for w in waits), waits
        seconds = [int(w.split("waiting ")[1].split("s ")[0]) for w in waits]
        assert seconds == sorted(seconds) and seconds[-1] >= 1, seconds
        assert run.poll() is None and not ledger.published.exists()  # nothing written meanwhile
        holder.stdin.write("\n")  # the holder lets go: the run goes on and finishes
        holder.stdin.flush()
        assert holder.wait(timeout=10) == 0
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err[-2000:]
        assert ledger.published.exists() and not list(ledger.root.glob(f".{ledger.published.name}*.tmp"))
        assert f"run {dead} was left unfinished by a process that is gone (killed): marked it failed" in said
    finally:
        for p in (run, holder):
            if p.poll() is None:
                p.kill()
                p.wait()
    with ledger.instance() as instance:
        assert instance.get_run_by_id(dead).status.value == "FAILURE"  # it no longer shows as running
        info = instance.event_log_storage.get_concurrency_info("duckdb_writer")
        assert dead not in {slot.run_id for slot in info.claimed_slots}  # and holds no pool slot


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_waiting_run_stops_promptly_on_sigterm_and_sigint(ledger, signum):
    holder = _hold_the_lock(ledger)
    run = ledger.start_run(GPULEDGER_LOCK_REPORT_SECONDS="0.5")
    try:
        _read_until(run.stderr, "waiting", count=1, timeout=60)
        run.send_signal(signum)
        sent = time.monotonic()
        rest = run.stderr.read()  # to its end: the process has exited
        run.wait(timeout=10)
        assert time.monotonic() - sent < 5
        assert run.returncode == 128 + signum
        assert f"stopped by {signum.name} during 2026-11-02, before it finished" in rest, rest[-1000:]
        assert "Traceback" not in rest
        with ledger.instance() as instance:  # Dagster recorded the interrupted run as failed, not running
            runs = instance.get_runs()
            assert [r.status.value for r in runs] == ["FAILURE"]
    finally:
        for p in (run, holder):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_the_instance_watches_dead_run_workers_and_keeps_no_writer_pool(ledger):
    """dagster.yaml as shipped: run monitoring on, with a runtime limit that fails a started run
    whose worker vanished, slots of ended runs freed, and no pool limit a dead claim could exhaust."""
    with ledger.instance() as instance:
        assert instance.run_monitoring_enabled
        settings = instance.run_monitoring_settings
        assert 0 < settings["max_runtime_seconds"] and 0 < settings["free_slots_after_run_end_seconds"]
        assert instance.event_log_storage.get_pool_config().default_pool_limit is None
        # a sensor asking for many days starts a few runs at a time, not a process per day
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 3
