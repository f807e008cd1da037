"""Ground truth of the under-use lens (truth/efficiency.csv), from the simulator's own painted state.

truth/efficiency.csv  day,team,project,low_activity_gpu_seconds,gpus_never_active
    - low_activity_gpu_seconds: the project's productive GPU-seconds (timeline.py's categories) inside GPU
      minutes whose SM activity, as the simulator drew it for the samples it wrote that minute, averages
      below 0.25 (the default efficiency.low_activity): zero phases shorter than the idle rule, blocking
      saves, light work, and the minutes a short phase shares with them. Fleet and off-bill nodes; the MIG
      node is never low.
    - gpus_never_active: per job and day, the GPUs it held that showed only zero kinds (jobs.ZERO_KINDS) that
      day, when another of its GPUs showed a working kind; summed over the project's jobs.
"""
from __future__ import annotations

import csv
import datetime as dt
from collections import defaultdict
from pathlib import Path

import numpy as np

from .fleet import PROJECT_TEAM, PROJECTS
from .jobs import SAMPLE_S, ZERO_KINDS
from .timeline import C_PROD

LOW_ACTIVITY = 0.25


class EfficiencyTruth:
    def __init__(self, project_of_key: np.ndarray):
        self.project_of_key = project_of_key
        self.low: dict[tuple[str, int], int] = defaultdict(int)            # (day, project index) -> GPU-s
        self.gpus: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])   # (day, job key) -> seen, active

    def add(self, day: dt.date, cat: np.ndarray, kind: np.ndarray, holder: np.ndarray, t_idx: np.ndarray,
            sm: np.ndarray) -> None:
        """One node-day: `cat`, `kind`, `holder` are (8, 86400) per-second arrays (timeline.py); `sm` the SM
        activity written at samples `t_idx` (samples × 8)."""
        d = day.isoformat()
        per_minute = 60 // SAMPLE_S
        minute = t_idx // per_minute
        low_minute = np.zeros((holder.shape[0], 1440), dtype=bool)
        for g in range(holder.shape[0]):
            n = np.bincount(minute, minlength=1440)
            total = np.bincount(minute, weights=sm[:, g], minlength=1440)
            low_minute[g] = (n > 0) & (total < LOW_ACTIVITY * np.maximum(n, 1))
        low = (cat == C_PROD) & (holder >= 0) & np.repeat(low_minute, 60, axis=1)
        if low.any():
            per_project = np.bincount(self.project_of_key[holder[low]], minlength=len(PROJECTS))
            for p, v in enumerate(per_project):
                if v:
                    self.low[(d, p)] += int(v)
        working = (holder >= 0) & ~np.isin(kind, list(ZERO_KINDS))
        for r in range(holder.shape[0]):
            row = holder[r]
            for key in np.unique(row[row >= 0]):
                seen_active = self.gpus[(d, int(key))]
                seen_active[0] += 1
                seen_active[1] += int(bool(working[r][row == key].any()))

    def write(self, path: Path) -> int:
        never: dict[tuple[str, int], int] = defaultdict(int)
        for (d, key), (seen, active) in self.gpus.items():
            if active:
                never[(d, int(self.project_of_key[key]))] += seen - active
        rows = []
        for d, p in sorted(set(self.low) | set(never)):
            project = PROJECTS[p]
            rows.append([d, PROJECT_TEAM[project], project, self.low.get((d, p), 0), never.get((d, p), 0)])
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["day", "team", "project", "low_activity_gpu_seconds", "gpus_never_active"])
            w.writerows(rows)
        return len(rows)
