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
truth/badput.csv  day,run_id,kind,gpu_seconds
    every GPU-second of every run job on every UTC day in one badput kind (docs/ledger.md#the-badput-of-a-run):
    disruption, idle, failed and unmonitored are the painted categories rerun_loss, allocated_idle,
    failed_job and unmonitored of the job's GPU-seconds; its productive seconds are, first wins, startup
    (start to its first step event, for a job that is no restart), checkpoint_save and evaluation (the
    logged saves and evaluations, runs.py), then data_wait and exposed_communication (the logged step
    timers × the job's GPUs on the node, for steps ending in productive time), and goodput the rest. A
    save of a run that does not log checkpoint_started is goodput: nothing marks where it began.
truth/runs.csv  run_id,day,tokens,tokens_kept,lost_gpu_seconds,restart_gpu_seconds
    one row per run and UTC day of the window on which the run held GPUs or logged events; raw windows (not
    precedence-painted), GPU-seconds = seconds × the job's GPUs.
truth/savings.csv  kind,subject,cluster,gpu_seconds   (simulator/savings.py)
    the GPU-seconds over the whole window of the savings opportunities the simulator knows exactly
    (docs/ledger.md#savings-opportunities), each GPU-second claimed once, in the mart's precedence; the
    policies are the config defaults. subject is the job's id (sacct's, `<array>_<task>` for a task) for
    the job kinds, the hostname for release_nodes; cluster disambiguates.
    - right_size: a job's GPUs it holds and never uses (Job.idle_gpus), for all the seconds it holds them
      (an allocation of >= 600 s) × its nodes. A job whose memory fits a smaller GPU is not priced here
      (that needs the pipeline's catalogue and prices).
    - cancel_hung_jobs (a batch job) / idle_session_timeout (kind `interactive`): each idle stretch of the
      GPUs the job uses (Job.idle_stretches, >= 600 s, cut at the window's end), its seconds past the limit
      from the stretch's start (policies.hung_job_cancel_minutes 60, policies.idle_session_minutes 120)
      × those GPUs × its nodes. The never-used GPUs' time is right_size's, never these.
    - release_nodes: a node paid by the hour with no commitment (a shared pool's on-demand node, a rented
      rate-card node), its idle_unallocated GPU-seconds, when above savings.release_idle_share (0.5) of
      its billed GPU-seconds (8 GPUs × every second of the window).
    Not here: the MIG node's jobs and node, checkpoint_interval, raise_mfu, reduce_commitment and
    add_commitment (money figures of models, not GPU-seconds the simulator holds).
"""
from __future__ import annotations

import csv
import datetime as dt
from collections import defaultdict
from pathlib import Path

import numpy as np

from .fleet import PROJECT_TEAM, PROJECTS, Fleet, Node
from .runs import Run
from .timeline import C_FAILED, C_IDLE, C_PROD, C_RERUN, C_UNMON, CATEGORIES

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


# badput kinds of the painted categories, and the codes the productive kinds are painted with (first wins:
# painted last)
BADPUT_OF_CATEGORY = {C_RERUN: "disruption", C_IDLE: "idle", C_FAILED: "failed", C_UNMON: "unmonitored"}
TIME_KINDS = ("startup", "checkpoint_save", "evaluation")


class BadputTruth:
    """truth/badput.csv, added up one node-day at a time from the painted categories and the runs' marks."""

    def __init__(self, runs: list[Run]):
        self.run_of = {j.key: run for run in runs for j in run.jobs}
        self.marks: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
        self.timed_steps: dict[int, list[tuple[int, float, float]]] = defaultdict(list)
        for run in runs:
            for a, b, kind, job in run.marks:
                self.marks[job.key].append((a, b, kind))
            for ev in run.events:
                if ev.event == "step" and (ev.data_seconds is not None or ev.comm_seconds is not None):
                    self.timed_steps[ev.job.key].append((ev.ts, ev.data_seconds or 0.0, ev.comm_seconds or 0.0))
        self.counts: dict[tuple[str, str, str], float] = defaultdict(float)

    def add(self, day: dt.date, day0: int, jobs, cat: np.ndarray, holder: np.ndarray) -> None:
        d = day.isoformat()
        for j in jobs:
            run = self.run_of.get(j.key)
            if run is None:
                continue
            held = holder == j.key
            by_category = np.bincount(cat[held], minlength=len(CATEGORIES))
            for c, kind in BADPUT_OF_CATEGORY.items():
                if by_category[c]:
                    self.counts[(d, run.run_id, kind)] += int(by_category[c])
            productive = held & (cat == C_PROD)
            painted = np.zeros(cat.shape, dtype=np.uint8)
            for code in range(len(TIME_KINDS), 0, -1):       # evaluation, then saves, then startup on top
                for a, b, kind in self.marks.get(j.key, ()):
                    if kind == TIME_KINDS[code - 1]:
                        a, b = max(a, day0) - day0, min(b, day0 + DAY) - day0
                        if b > a:
                            painted[:, a:b] = code
            by_kind = np.bincount(painted[productive], minlength=len(TIME_KINDS) + 1)
            for code, kind in enumerate(TIME_KINDS, start=1):
                if by_kind[code]:
                    self.counts[(d, run.run_id, kind)] += int(by_kind[code])
            data = comm = 0.0
            gpus = len(j.gpus)
            for ts, data_s, comm_s in self.timed_steps.get(j.key, ()):
                # a step ending on the day, its last second productive (not lost, idle or unmonitored)
                if day0 <= ts < day0 + DAY and productive[j.gpus[0], max(ts - day0 - 1, 0)]:
                    data += data_s * gpus
                    comm += comm_s * gpus
            if data:
                self.counts[(d, run.run_id, "data_wait")] += data
            if comm:
                self.counts[(d, run.run_id, "exposed_communication")] += comm
            self.counts[(d, run.run_id, "goodput")] += int(by_kind[0]) - data - comm

    def write(self, path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = sorted(self.counts.items())
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["day", "run_id", "kind", "gpu_seconds"])
            for (d, r, k), v in rows:
                w.writerow([d, r, k, round(v, 3)])
        return len(rows)
