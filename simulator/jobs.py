"""Slurm job records and the per-job activity phases that telemetry and ground truth are both drawn from.

Time is integer UTC epoch seconds throughout. A job's `phases` tile its allocation [start, end) exactly (cut at
the end of the simulated window), each phase saying what its GPUs were doing. Telemetry samples a phase's
kind; ground truth reads the same phases, so the two cannot disagree.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

SAMPLE_S = 30          # DCGM scrape interval
IDLE_MIN_S = 600       # the 10-minute idle rule

# Phase kinds. The "zero" kinds show GPU_UTIL 0 and SM_ACTIVE < 0.01 in telemetry.
NONE, STARTUP, TRAIN, SAVE, IDLE, EVAL, LIGHT, TEARDOWN = range(8)
ZERO_KINDS = frozenset({NONE, STARTUP, IDLE, TEARDOWN})

FAILED_STATES = ("FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "TIMEOUT", "CANCELLED", "REQUEUED")


def align_up(t: float) -> int:
    """Next sample boundary at or after t: phase changes inside a job sit on the 30 s grid so that a sample
    at t describes exactly [t, t+30)."""
    c = math.ceil(t)
    return -(-c // SAMPLE_S) * SAMPLE_S


@dataclass(eq=False)
class Job:
    key: int                    # creation order; stable handle before Slurm ids are assigned
    cluster: str
    kind: str                   # run, eval, debug, train, interactive, partial, hung, requeue, array, pending
    name: str
    user: str
    uid: int
    project: str
    partition: str
    qos: str
    n_nodes: int
    gpus_per_node: int
    submit: int
    duration: int = 0           # planned runtime (non-run jobs)
    start: int | None = None    # None: never started (PENDING at the end of the window)
    end: int | None = None      # None: still running when the window ends
    state: str = "PENDING"      # as seen at the end of the window
    exit_code: str = "0:0"
    cancel_uid: int | None = None
    nodes: tuple[int, ...] = ()
    gpus: tuple[int, ...] = ()  # GPU indices held on every node of the job
    idle_gpus: tuple[int, ...] = ()   # held but never used (subset of gpus)
    phases: list[tuple[int, int, int]] = field(default_factory=list)
    run_id: str | None = None
    restarts: int = 0
    array: tuple[int, int] | None = None     # (array group, task number)
    requeue_of: "Job | None" = None
    resumed: bool = False       # a later job of the same run restored a checkpoint written before it ended
    rerun_windows: list[tuple[int, int]] = field(default_factory=list)
    mfu: float = 0.0
    fb_mib: float = 0.0
    job_id: str = ""
    job_id_raw: str = ""
    comment: str = ""
    recipe: dict = field(default_factory=dict)   # how to lay out phases once the start time is known

    @property
    def n_gpus(self) -> int:
        return self.n_nodes * self.gpus_per_node

    def alloc_end(self, t1: int) -> int:
        """End of the allocation inside the simulated world (the window's end for a running job)."""
        assert self.start is not None
        return min(self.end, t1) if self.end is not None else t1

    @property
    def failed(self) -> bool:
        """failed_job applies: ended badly and no later job resumed its work."""
        return self.end is not None and self.state.split(" ")[0] in FAILED_STATES and not self.resumed

    def idle_stretches(self, t1: int) -> list[tuple[int, int, tuple[int, ...]]]:
        """Contiguous zero-utilisation stretches of at least IDLE_MIN_S within this job, per GPU group.

        Stretches are cut at the end of the window before the 10-minute rule is applied (nobody can yet
        know whether a stretch still open at the end will reach 10 minutes), and they are per job: zero
        utilisation of a GPU between two jobs is unallocated, never part of a stretch.
        """
        if self.start is None:
            return []
        out = []
        used = tuple(g for g in self.gpus if g not in self.idle_gpus)
        if self.idle_gpus:
            a, b = self.start, self.alloc_end(t1)
            if b - a >= IDLE_MIN_S:
                out.append((a, b, self.idle_gpus))
        if used:
            run_a = None
            run_b = None
            for a, b, k in self.phases:
                if k in ZERO_KINDS:
                    if run_b == a:
                        run_b = b
                    else:
                        if run_a is not None and run_b - run_a >= IDLE_MIN_S:
                            out.append((run_a, run_b, used))
                        run_a, run_b = a, b
            if run_a is not None and run_b - run_a >= IDLE_MIN_S:
                out.append((run_a, run_b, used))
        return out


def ambiguous_windows(tz_name: str, t0: int, t1: int) -> list[tuple[int, int]]:
    """UTC ranges whose local wall-clock time occurs twice (a DST fall-back), within [t0 - 1 day, t1 + 1 day).

    sacct prints local times without an offset, so an instant in such a range cannot be read back
    unambiguously. The simulator keeps every Submit/Start/End out of them (jobs still run across the change),
    so each sacct time has exactly one reading and the truth stays reconstructible.
    """
    tz = ZoneInfo(tz_name)
    out = []
    prev = None
    for t in range(t0 - 86400, t1 + 86400, 3600):
        off = dt.datetime.fromtimestamp(t, tz).utcoffset().total_seconds()
        if prev is not None and off < prev:
            back = int(prev - off)
            out.append((t - back, t + back))
        prev = off
    return out


def clear_of(t: int, windows: list[tuple[int, int]], after: int = 60) -> int:
    """t, or just after the ambiguous window that contains it."""
    for a, b in windows:
        if a <= t < b:
            return b + after
    return t


def in_windows(t: int, windows: list[tuple[int, int]]) -> bool:
    return any(a <= t < b for a, b in windows)


def lay_phases(s: int, e: int, items: list[tuple[int, int | None]], teardown: int = 0) -> list[tuple[int, int, int]]:
    """Lay (kind, seconds) items from s, cutting at e; boundaries after s sit on the sample grid. An item of
    None seconds fills the rest. A non-zero `teardown` ends the job with that many zero-utilisation seconds."""
    body_end = max(s, (e - teardown) // SAMPLE_S * SAMPLE_S) if teardown else e
    ph: list[tuple[int, int, int]] = []
    t = s
    for kind, length in items:
        if t >= body_end:
            break
        b = body_end if length is None else min(align_up(t + length), body_end)
        if b > t:
            ph.append((t, b, kind))
            t = b
    if t < body_end:
        if ph:
            ph[-1] = (ph[-1][0], body_end, ph[-1][2])
        else:
            ph.append((s, body_end, STARTUP))
    if body_end < e:
        ph.append((body_end, e, TEARDOWN))
    return ph


def clip_phases(phases: list[tuple[int, int, int]], a: int, b: int) -> list[tuple[int, int, int]]:
    out = []
    for pa, pb, k in phases:
        pa, pb = max(pa, a), min(pb, b)
        if pb > pa:
            out.append((pa, pb, k))
    return out


def check_phases(job: Job, t1: int) -> None:
    """Phases must tile [start, alloc_end) without gaps: everything downstream relies on it."""
    if job.start is None:
        assert not job.phases, job
        return
    t = job.start
    for a, b, _ in job.phases:
        assert a == t and b > a, (job.kind, job.key, job.phases)
        t = b
    assert t == job.alloc_end(t1), (job.kind, job.key, t, job.alloc_end(t1), job.phases)
    # an idle stretch starts and ends on the sample grid (or at the job's own edges), so 30 s telemetry
    # with sample-and-hold reproduces it to the second
    for a, b, _ in job.idle_stretches(t1):
        assert a == job.start or a % SAMPLE_S == 0, (job.kind, a)
        assert b == job.alloc_end(t1) or b % SAMPLE_S == 0, (job.kind, b)


def check_no_overlap(jobs: list[Job], t1: int) -> None:
    """No two jobs hold the same GPU of the same node at the same time."""
    held: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for j in jobs:
        if j.start is None:
            continue
        for n in j.nodes:
            for g in j.gpus:
                held.setdefault((n, g), []).append((j.start, j.alloc_end(t1)))
    for ivs in held.values():
        ivs.sort()
        for (_, b), (a, _) in zip(ivs, ivs[1:]):
            assert a >= b + SAMPLE_S, "overlapping or touching allocations on one GPU"
