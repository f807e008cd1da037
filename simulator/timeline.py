"""Per-GPU-second state of one node for one UTC day, painted from the jobs' phases.

Two uint8/int32 arrays of shape (8, 86400) per node-day: what each GPU was doing (phase kind) and which job
held it (job key, -1 when none). Telemetry samples every 30th column; ground truth paints ledger categories on
a third array, lowest precedence first, so a higher category overwrites a lower one on overlap:

    idle_unallocated < productive < unmonitored < failed_job < allocated_idle < rerun_loss

Only one node-day is alive at a time, which keeps memory flat however large the fleet.
"""
from __future__ import annotations

import numpy as np

from .jobs import IDLE, NONE, Job

DAY = 86400
CATEGORIES = ("idle_unallocated", "productive", "unmonitored", "failed_job", "allocated_idle", "rerun_loss")
C_UNALLOC, C_PROD, C_UNMON, C_FAILED, C_IDLE, C_RERUN = range(6)


def _rows(gpus: tuple[int, ...]):
    """A slice when the GPUs are contiguous (the common case), else the list to loop over."""
    if gpus and gpus == tuple(range(gpus[0], gpus[-1] + 1)):
        return [slice(gpus[0], gpus[-1] + 1)]
    return list(gpus)


class NodeIndex:
    """Jobs per node, so a node-day only looks at the jobs that touched that node."""

    def __init__(self, jobs: list[Job], n_nodes: int):
        self.by_node: list[list[Job]] = [[] for _ in range(n_nodes)]
        for j in jobs:
            if j.start is not None:
                for n in j.nodes:
                    self.by_node[n].append(j)
        for lst in self.by_node:
            lst.sort(key=lambda j: (j.start, j.key))

    def jobs(self, node: int, a: int, b: int, t1: int) -> list[Job]:
        return [j for j in self.by_node[node] if j.start < b and j.alloc_end(t1) > a]


def paint_state(jobs: list[Job], day0: int) -> tuple[np.ndarray, np.ndarray]:
    kind = np.full((8, DAY), NONE, dtype=np.uint8)
    holder = np.full((8, DAY), -1, dtype=np.int32)
    day1 = day0 + DAY
    for j in jobs:
        rows = _rows(j.gpus)
        for a, b, k in j.phases:
            a, b = max(a, day0) - day0, min(b, day1) - day0
            if b > a:
                for r in rows:
                    kind[r, a:b] = k
                    holder[r, a:b] = j.key
        if j.idle_gpus:
            a, b = max(j.phases[0][0], day0) - day0, min(j.phases[-1][1], day1) - day0
            if b > a:
                for r in _rows(j.idle_gpus):
                    kind[r, a:b] = IDLE
    return kind, holder


def paint_categories(jobs: list[Job], holder: np.ndarray, day0: int, t1: int,
                     outages: list[tuple[int, int]]) -> np.ndarray:
    cat = np.where(holder >= 0, C_PROD, C_UNALLOC).astype(np.uint8)
    day1 = day0 + DAY

    def paint(a: int, b: int, gpus: tuple[int, ...], c: int) -> None:
        a, b = max(a, day0) - day0, min(b, day1) - day0
        if b > a:
            for r in _rows(gpus):
                cat[r, a:b] = c

    for a, b in outages:
        a, b = max(a, day0) - day0, min(b, day1) - day0
        if b > a:
            seg = cat[:, a:b]
            seg[holder[:, a:b] >= 0] = C_UNMON
    for j in jobs:
        if j.failed:
            paint(j.start, j.alloc_end(t1), j.gpus, C_FAILED)
    for j in jobs:
        for a, b, gpus in j.idle_stretches(t1):
            paint(a, b, gpus, C_IDLE)
    for j in jobs:
        for a, b in j.rerun_windows:
            paint(a, min(b, t1), j.gpus, C_RERUN)
    return cat


def count_categories(cat: np.ndarray, holder: np.ndarray, project_of_key: np.ndarray, n_projects: int
                     ) -> np.ndarray:
    """(n_projects + 1, 6) GPU-second counts; the last project row is 'no job'."""
    proj = np.where(holder >= 0, project_of_key[np.maximum(holder, 0)], n_projects)
    key = proj.astype(np.int64) * 6 + cat
    return np.bincount(key.ravel(), minlength=(n_projects + 1) * 6).reshape(n_projects + 1, 6)


def count_project_hours(holder: np.ndarray, project_of_key: np.ndarray, n_projects: int) -> np.ndarray:
    """(n_projects + 1, 24) GPU-seconds per hour of the day; the last project row is 'no job'."""
    proj = np.where(holder >= 0, project_of_key[np.maximum(holder, 0)], n_projects).astype(np.int64)
    key = proj * 24 + np.arange(DAY) // 3600
    return np.bincount(key.ravel(), minlength=(n_projects + 1) * 24).reshape(n_projects + 1, 24)
