"""PyTorch Lightning CSVLogger `metrics.csv` (columns `epoch`, `step` and the logged metrics, a row per
logging call): rows with a training metric are steps. It carries no time unless a `time` or
`timestamp` column was logged (epoch seconds or ISO 8601); without one, a step s is at
`start + (s − resumed step) × (end − start) / steps run` from run.yaml: an even pace. A resumed
run's new `version_N/metrics.csv` starts after run.yaml's `resume_step`."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timezone

from pipelines.ingest.trainer_logs.events import LogEvent, Reading
from pipelines.ingest.trainer_logs.run_yaml import RunYaml

TIME_COLUMNS = ("timestamp", "time")


def recognises(name: str, text: str) -> bool:
    return name == "metrics.csv" and "step" in [c.strip() for c in text.split("\n", 1)[0].split(",")]


def read(text: str, rel: str, meta: RunYaml) -> Reading:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return Reading([])
    header = [c.strip() for c in rows[0]]
    train = [c for c in header if c.startswith("train") or c == "loss"]
    time_col = next((header.index(c) for c in TIME_COLUMNS if c in header), None)
    resumed = meta.resume_step or 0
    parsed, bad = [], []
    for n, row in enumerate(rows[1:], start=2):
        cells = dict(zip(header, (c.strip() for c in row)))
        if not any(cells.get(c) for c in train):
            continue  # a validation or epoch-end row: no training step
        step = _int(cells.get("step"))
        if step is None:
            bad.append(LogEvent(n, ",".join(row), "step", reason=f"step {cells.get('step')!r} is no whole number"))
        elif step > resumed:
            wall = _time(row[time_col]) if time_col is not None and time_col < len(row) else None
            parsed.append((n, ",".join(row), step, wall))
    last_step = max((p[2] for p in parsed), default=resumed)
    pace = meta.seconds_per_step(last_step - resumed) if time_col is None else None

    def at(step: int) -> float | None:
        return (step - resumed) * pace if pace else None

    events = []
    if parsed:
        # Lightning logs a step's metrics after it ran: training began at the step it counts from, on
        # the pace of its first two logged times when it logs times
        n, line, first, wall = parsed[0]
        began = None
        if wall is not None and len(parsed) > 1 and parsed[1][3] is not None and parsed[1][2] > first:
            began = wall - (parsed[1][3] - wall) * ((first - resumed) / (parsed[1][2] - first))
        events.append(LogEvent(n, line, "step", elapsed=at(resumed), wall=began, step=resumed, steps=0, tokens=0))
    last = resumed
    for n, line, step, wall in parsed:
        if step > last:  # rows logged again at a step (several metrics' calls) are one step
            events.append(LogEvent(n, line, "step", step=step, steps=step - last, wall=wall,
                                   elapsed=at(step) if wall is None else None))
            last = step
    return Reading(events + bad)  # saves and the load, if any, from run.yaml (events.py)


def _int(text: str | None) -> int | None:
    try:
        value = float(text) if text else None
    except ValueError:
        return None
    return int(value) if value is not None and value.is_integer() else None


def _time(text: str) -> datetime | None:
    text = text.strip()
    try:
        return datetime.fromtimestamp(float(text), tz=timezone.utc)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
