"""Trainer event logs: runs/<run_id>.jsonl, one compact JSON object a line, in time order.

Key order follows the examples of docs/ingest/runs.md. run_config carries the job_id of the run's first
job. Events after the end of the simulated window do not exist yet and are not written.
"""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from .runs import Run


def iso_z(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def event_dicts(run: Run, t1: int):
    for ev in sorted(run.events, key=lambda e: e.ts):   # stable: ties keep generation order
        if ev.ts >= t1:
            continue
        if ev.event == "run_config":
            yield {"event": "run_config", "run_id": run.run_id, "job_id": ev.job.job_id, "project": run.project,
                   "model": dict(run.model), "dtype": "bf16", "ts": iso_z(ev.ts)}
        elif ev.event == "step":
            timers = {k: v for k, v in (("data_seconds", ev.data_seconds), ("comm_seconds", ev.comm_seconds))
                      if v is not None}
            yield {"event": "step", "run_id": run.run_id, "job_id": ev.job.job_id, "step": ev.step,
                   "tokens": ev.tokens, **timers, "ts": iso_z(ev.ts)}
        else:
            yield {"event": ev.event, "run_id": run.run_id, "job_id": ev.job.job_id, "step": ev.step,
                   "ts": iso_z(ev.ts)}


def write_runs(root: Path, runs: list[Run], t1: int) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    stats = {"files": 0, "rows": 0, "events": 0, "tokens": 0, "runs": 0}
    for run in sorted(runs, key=lambda r: r.run_id):
        lines = []
        for d in event_dicts(run, t1):
            lines.append(json.dumps(d, separators=(",", ":")))
            if d["event"] == "step":
                stats["tokens"] += d["tokens"]
        (root / f"{run.run_id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        stats["files"] += 1
        stats["runs"] += 1
        stats["events"] += len(lines)
    stats["rows"] = stats["events"]
    return stats
