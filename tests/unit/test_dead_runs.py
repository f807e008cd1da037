"""Which runs' processes are certainly gone: judged from the tags a run carries, against the OS."""

import socket
import subprocess
import sys
import time

import dagster as dg

from pipelines.lib.dead_runs import (
    HOST_TAG, PID_TAG, PROCESS_TAG, _process_token, is_dead, process_tags, reap_dead_runs,
)


def _sleeper() -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    time.sleep(0.2)
    return proc


def test_alive_gone_reused_rebooted_and_out_of_sight():
    assert not is_dead(process_tags())  # this very process
    proc = _sleeper()
    try:
        tags = {**process_tags(), PID_TAG: str(proc.pid), PROCESS_TAG: _process_token(proc.pid)}
        boot, namespace, start = tags[PROCESS_TAG].split(":")
        assert not is_dead(tags)
        assert is_dead({**tags, PROCESS_TAG: f"{boot}:{namespace}:{int(start) - 1}"})  # the pid, reused
        assert is_dead({**tags, PROCESS_TAG: f"another-boot:{namespace}:{start}"})  # the machine rebooted
        assert not is_dead({**tags, HOST_TAG: "another-host"})  # not ours to judge
    finally:
        proc.kill()
        proc.wait()
    assert is_dead(tags)  # gone
    assert not is_dead({**tags, PROCESS_TAG: f"{boot}:1:{start}"})  # another pid namespace: out of sight
    assert not is_dead({HOST_TAG: socket.gethostname()})  # no pid: nothing to judge


def test_reaping_fails_only_the_dead_and_frees_their_slots():
    from dagster._core.storage.dagster_run import DagsterRun, DagsterRunStatus

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    instance = dg.DagsterInstance.ephemeral()
    dead = {**process_tags(), PID_TAG: str(gone.pid), PROCESS_TAG: ""}
    runs = {"dead": dead, "alive": process_tags(), "elsewhere": {**dead, HOST_TAG: "another-host"}}
    for run_id, tags in runs.items():
        instance.add_run(DagsterRun(job_name="daily_ledger", run_id=run_id, status=DagsterRunStatus.STARTED, tags=tags))
    instance.add_run(DagsterRun(job_name="daily_ledger", run_id="done", status=DagsterRunStatus.SUCCESS, tags=dead))
    # killed between creating its run and starting it
    instance.add_run(DagsterRun(job_name="daily_ledger", run_id="never", status=DagsterRunStatus.NOT_STARTED,
                                tags=dead))
    assert sorted(reap_dead_runs(instance)) == ["dead", "never"]
    assert {r: instance.get_run_by_id(r).status.value for r in [*runs, "done", "never"]} == {
        "dead": "FAILURE", "alive": "STARTED", "elsewhere": "STARTED", "done": "SUCCESS", "never": "FAILURE"}
    assert reap_dead_runs(instance) == []
