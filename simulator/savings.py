"""truth/savings.csv: what the savings opportunities the simulator can know exactly are worth, in GPU-seconds
over the whole simulated window, from its own state (the jobs' phases, the nodes' painted seconds), never
from the pipeline. Definition in truth.py's docstring; the policy figures are the config defaults
(`policies:` and `savings:`, docs/ledger.md#savings-opportunities), written down here rather than read.
"""
from __future__ import annotations

import csv
from pathlib import Path

HUNG_JOB_CANCEL_S = 60 * 60         # policies.hung_job_cancel_minutes
IDLE_SESSION_S = 120 * 60           # policies.idle_session_minutes
RELEASE_IDLE_SHARE = 0.5            # savings.release_idle_share

JOB_KINDS = ("cancel_hung_jobs", "idle_session_timeout", "right_size")
KINDS = (*JOB_KINDS, "release_nodes")


def job_savings(jobs, t1: int) -> list[list]:
    """[kind, subject (the job's id), cluster, gpu_seconds] of the jobs' idle time, claimed once: the GPUs a
    job holds and never uses go to right_size for all they are held; the idle stretches of the GPUs it
    uses to cancel_hung_jobs (batch) or idle_session_timeout (interactive) for their seconds past the
    limit, counted from the stretch's start."""
    rows = []
    for j in jobs:
        if j.start is None:
            continue
        limit = IDLE_SESSION_S if j.kind == "interactive" else HUNG_JOB_CANCEL_S
        kind = "idle_session_timeout" if j.kind == "interactive" else "cancel_hung_jobs"
        past = never = 0
        for a, b, group in j.idle_stretches(t1):
            if j.idle_gpus and group == j.idle_gpus:
                never += (b - a) * len(group) * len(j.nodes)
            else:
                past += max(0, b - a - limit) * len(group) * len(j.nodes)
        if past:
            rows.append([kind, j.job_id, j.cluster, past])
        if never:
            rows.append(["right_size", j.job_id, j.cluster, never])
    return rows


def node_savings(nodes, idle_unallocated: dict[int, int], billed: dict[int, int]) -> list[list]:
    """[release_nodes, hostname, cluster, gpu_seconds] of each on-demand or rented node (`nodes`: those
    paid by the hour with no commitment) idle with no job above RELEASE_IDLE_SHARE of its billed
    GPU-seconds over the window: its idle_unallocated GPU-seconds."""
    rows = []
    for n in nodes:
        idle, total = idle_unallocated.get(n.index, 0), billed.get(n.index, 0)
        if idle > 0 and idle > RELEASE_IDLE_SHARE * total:
            rows.append(["release_nodes", n.hostname, n.cluster, idle])
    return rows


def write_savings(path: Path, rows: list[list]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(rows, key=lambda r: (KINDS.index(r[0]), r[2], r[1]))
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["kind", "subject", "cluster", "gpu_seconds"])
        w.writerows(rows)
    return len(rows)
