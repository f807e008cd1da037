"""truth/incidents.csv: the incidents an alert should be raised for, from the simulator's own state.

    kind,subject,cluster,start_ts,end_ts,hosts
    hung_job              a job whose GPUs all sat at zero utilisation for at least HUNG_S in a row
                          (phases STARTUP/IDLE/TEARDOWN of the GPUs it uses, its never-used GPUs being at
                          zero throughout; a MIG job's idle stretch), cut at the window's end. start_ts is
                          when the stretch began, end_ts when it ended (the window's end if still idle).
    idle_session          the same of an interactive job (a notebook, an editor, a shell: kind `interactive`),
                          idle for at least IDLE_SESSION_S in a row
    step_time_regression  a run whose steps a degraded node slowed (runs.py: SLOW_FACTOR for SLOW_S):
                          start_ts when its steps began to slow, end_ts its last slowed step event.
Times are ISO 8601 UTC. HUNG_S is the `alerts.hung_minutes` default (30), IDLE_SESSION_S the
`policies.idle_session_minutes` default (120); shorter zero stretches
(startups, data-loader stalls of 12–25 min) are listed nowhere: no alert is owed for them.
"""
from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

HUNG_S = 30 * 60
IDLE_SESSION_S = 120 * 60


def _iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def incident_rows(jobs, mig_jobs, slowdowns, hostnames: list[str], t1: int, mig_cluster: str, mig_host: str
                  ) -> list[list]:
    """`jobs`: every job of the billed fleet and of the nodes no bill covers; `hostnames` by node index."""
    rows = []
    for j in jobs:
        if j.start is None:
            continue
        used = tuple(g for g in j.gpus if g not in j.idle_gpus)
        hosts = ",".join(hostnames[n] for n in j.nodes)
        for a, b, group in j.idle_stretches(t1):
            # every GPU of the job at zero: the used GPUs' zero phases, or a job that uses none of its GPUs
            whole = group == used if used else group == j.idle_gpus
            session = j.kind == "interactive"
            if whole and b - a >= (IDLE_SESSION_S if session else HUNG_S):
                rows.append(["idle_session" if session else "hung_job", j.job_id, j.cluster, _iso(a), _iso(b), hosts])
    for m in mig_jobs:
        if m.idle and min(m.idle[1], t1) - m.idle[0] >= HUNG_S:
            rows.append(["hung_job", m.job_id, mig_cluster, _iso(m.idle[0]), _iso(min(m.idle[1], t1)), mig_host])
    for run_id, cluster, a, b, nodes in slowdowns:
        rows.append(["step_time_regression", run_id, cluster, _iso(a), _iso(b),
                     ",".join(hostnames[n] for n in nodes)])
    return sorted(rows, key=lambda r: (r[3], r[0], r[1]))


def write_incidents(path: Path, rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["kind", "subject", "cluster", "start_ts", "end_ts", "hosts"])
        w.writerows(rows)
