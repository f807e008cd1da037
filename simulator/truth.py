"""Ground truth, computed from the simulator's own state (never from its output files).

truth/gpu_seconds.csv  day,team,project,category,gpu_seconds
    Every billed GPU-second of every node on every UTC day of the window in exactly one category (precedence
    and painting in timeline.py). Allocated seconds go to the job's project (via its Slurm account) and that
    project's team; unallocated seconds to the node pool's owning team (or `_unallocated`), project
    `_unallocated`. Edges decided here:
    - allocated_idle is a stretch of >= 600 s of zero utilisation (phases STARTUP/IDLE/TEARDOWN, or a GPU a job
      holds but never uses) inside one job, cut at the window end first; stretches crossing midnight count
      whole on both days. Zero utilisation between jobs is idle_unallocated, never allocated_idle.
    - failed_job: the job ended FAILED, NODE_FAIL, OUT_OF_MEMORY, TIMEOUT, CANCELLED or REQUEUED (the first
      instance of the requeued job) and no later job resumed it; run jobs that were interrupted are always
      resumed, so their non-rerun time is productive. A job still RUNNING at the window end is not failed.
    - unmonitored: allocated seconds inside a telemetry outage [first missing sample, first sample after);
      outages never overlap allocated_idle stretches (the pipeline could not see them).
    - rerun_loss: [last completed checkpoint save of the interrupted job, its end) on its GPUs, and
      [resuming job start, its first step event) on the resuming job's GPUs.
truth/runs.csv  run_id,day,tokens,tokens_kept,lost_gpu_seconds,restart_gpu_seconds
    one row per run and UTC day of the window on which the run held GPUs or logged events; raw windows (not
    precedence-painted), GPU-seconds = seconds × the job's GPUs.
"""
from __future__ import annotations

import csv
import datetime as dt
from collections import defaultdict
from pathlib import Path

import numpy as np

from .fleet import PROJECT_TEAM, PROJECTS, Fleet, Node
from .runs import Run
from .timeline import CATEGORIES

DAY = 86400


class GpuSecondsTruth:
    def __init__(self, fleet: Fleet, off_bill: list[Node] = ()):
        self.nodes = [*fleet.nodes, *off_bill]     # by node index (offbill.py numbers its nodes after the fleet's)
        self.counts: dict[tuple[str, str, str, str], int] = defaultdict(int)

    def add(self, day: dt.date, node_index: int, counts: np.ndarray) -> None:
        node = self.nodes[node_index]
        for pi in range(len(PROJECTS) + 1):
            for ci, cname in enumerate(CATEGORIES):
                v = int(counts[pi, ci])
                if not v:
                    continue
                if pi == len(PROJECTS):
                    team, project = (node.owner_team or "_unallocated"), "_unallocated"
                    assert cname == "idle_unallocated"
                else:
                    project = PROJECTS[pi]
                    team = PROJECT_TEAM[project]
                self.counts[(day.isoformat(), team, project, cname)] += v

    def write(self, path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = sorted(self.counts.items())
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["day", "team", "project", "category", "gpu_seconds"])
            for (d, t, p, c), v in rows:
                # a MIG instance's seconds are fractions of a GPU's (simulator/mig.py)
                w.writerow([d, t, p, c, v if isinstance(v, int) else float(v)])
        return len(rows)


def _overlap(a: int, b: int, x: int, y: int) -> int:
    return max(0, min(b, y) - max(a, x))


def runs_truth(runs: list[Run], t0: int, t1: int) -> list[list]:
    rows = []
    n_days = (t1 - t0) // DAY
    for run in sorted(runs, key=lambda r: r.run_id):
        for di in range(n_days):
            a, b = t0 + di * DAY, t0 + (di + 1) * DAY
            tokens = kept = 0
            any_event = False
            for ev in run.events:
                if a <= ev.ts < b and ev.ts < t1:
                    any_event = True
                    if ev.event == "step":
                        tokens += ev.tokens
                        kept += ev.tokens if ev.kept else 0
            held = any(j.start < b and j.alloc_end(t1) > a for j in run.jobs)
            if not (held or any_event):
                continue
            lost = sum(_overlap(x, y, a, b) * j.n_gpus for x, y, j in run.lost_windows)
            restart = sum(_overlap(x, min(y, t1), a, b) * j.n_gpus for x, y, j in run.restart_windows)
            day = dt.datetime.fromtimestamp(a, dt.timezone.utc).date().isoformat()
            rows.append([run.run_id, day, tokens, kept, lost, restart])
    return rows


def write_runs_truth(path: Path, rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["run_id", "day", "tokens", "tokens_kept", "lost_gpu_seconds", "restart_gpu_seconds"])
        w.writerows(rows)
