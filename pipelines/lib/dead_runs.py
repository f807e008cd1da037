"""Runs whose process died before they could say so.

A run killed with SIGKILL (or by the OOM killer, or a reboot) never records its end: the Dagster
instance shows it STARTED for good, and whatever it claimed in the instance (concurrency slots)
stays claimed. It blocks nothing of ours — the warehouse's writer lock is the OS's and went with the
process — but the UI would show it running forever. So each run `gpuledger run` starts carries tags
naming its process (host, pid, and the process's boot, pid namespace and start time), and a later
run marks those whose process is gone as failed and frees their slots.

A run is judged dead only on the host (and in the pid namespace) that ran it, and only when the
process is certainly gone: the machine rebooted since, there is no such pid, or the pid now belongs
to a process started at another time. Runs
launched by dagster-daemon carry no such tags; `run_monitoring` in dagster.yaml looks after those.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from pathlib import Path

import dagster as dg

HOST_TAG = "gpuledger/host"
PID_TAG = "gpuledger/pid"
PROCESS_TAG = "gpuledger/process"  # boot id, pid namespace and start time of the pid, where the OS says them


def process_tags() -> dict[str, str]:
    """The tags naming this process."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid()), PROCESS_TAG: _process_token(os.getpid()) or ""}


def is_dead(tags: Mapping[str, str]) -> bool:
    """Whether the process the tags name is certainly gone (False when it may be alive, or runs
    where this process cannot see it: another host, or another pid namespace, as in a container)."""
    if tags.get(HOST_TAG) != socket.gethostname() or not tags.get(PID_TAG, "").isdigit():
        return False
    recorded = (tags.get(PROCESS_TAG) or "").split(":")
    here = (_process_token(os.getpid()) or "").split(":")
    if len(recorded) == len(here) == 3:
        if recorded[0] != here[0]:
            return True  # recorded in an earlier boot
        if recorded[1] != here[1]:
            return False  # another pid namespace: its pids are not ours to look up
    pid = int(tags[PID_TAG])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, someone else's
    now = _process_token(pid)
    return len(recorded) == 3 and now is not None and now != ":".join(recorded)  # the pid was reused


def reap_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Marks failed every unfinished run of this host whose process is gone, frees the concurrency
    slots it held, and returns their run ids."""
    records = instance.get_run_records(dg.RunsFilter(
        # NOT_STARTED too: a process killed between creating its run and starting it leaves one
        statuses=[dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED,
                  dg.DagsterRunStatus.CANCELING],
        tags={HOST_TAG: socket.gethostname()},
    ))
    reaped = []
    for record in records:
        run = record.dagster_run
        if not is_dead(run.tags):
            continue
        instance.report_run_failed(run, f"its process (pid {run.tags[PID_TAG]} on {run.tags[HOST_TAG]}) "
                                        "ended without finishing the run: killed (SIGKILL, out of memory, "
                                        "reboot). Marked failed by a later gpuledger run.")
        if instance.event_log_storage.supports_global_concurrency_limits:
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        reaped.append(run.run_id)
    return reaped


def _process_token(pid: int) -> str | None:
    """`<boot id>:<pid namespace>:<start time in clock ticks since boot>` of a process, from /proc
    (None where there is none, or the process is gone)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
    start_ticks = stat[stat.rindex(")") + 2:].split()[19]
    return f"{boot}:{namespace}:{start_ticks}"
