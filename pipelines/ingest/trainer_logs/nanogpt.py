"""nanoGPT-style logs (modded-nanogpt's `step:N/M train_loss:… train_time:Tms step_avg:Ams` lines):
elapsed times only, so run.yaml's `start` gives the wall clock. The timer may restart after the first
steps (compile warm-up): those steps' tokens are counted, at the moment the timer restarted, and
their time is start-up."""

from __future__ import annotations

import re

from pipelines.ingest.trainer_logs.events import LogEvent, Reading
from pipelines.ingest.trainer_logs.run_yaml import RunYaml

STEP = re.compile(r"^\s*step:(?P<step>\d+)/(?P<total>\d+)\b(?P<rest>.*?)\btrain_time:(?P<ms>[\d.]+)ms")


def recognises(name: str, text: str) -> bool:
    return any(STEP.match(line) for line in text.splitlines()[:5000])


def read(text: str, rel: str, meta: RunYaml) -> Reading:
    steps = []  # (row, line, step, seconds on the timer)
    for n, line in enumerate(text.splitlines(), start=1):
        m = STEP.match(line)
        if m and "val_loss" not in m["rest"]:  # a validation line repeats the step it follows
            steps.append((n, line, int(m["step"]), float(m["ms"]) / 1000))
    if not steps:
        return Reading([])
    resumed = meta.resume_step or 0  # a resumed run's log counts its steps on from there
    restart = next((i for i in range(1, len(steps)) if steps[i][3] < steps[i - 1][3]), None)
    if restart is None:
        # the timer's zero is where training began: start-up ends there
        events = [LogEvent(steps[0][0], steps[0][1], "step", elapsed=0.0, step=resumed, steps=0, tokens=0)]
        offset, last, rest = 0.0, resumed, steps
    else:
        # the warm-up's steps, counted where the timer restarted (the first step event: start-up ends)
        row, line, last, offset = steps[restart - 1]
        events = [LogEvent(row, line, "step", elapsed=offset, step=last, steps=last - resumed)]
        rest = steps[restart:]
    previous = 0.0
    for row, line, step, seconds in rest:
        if seconds < previous:
            offset += previous  # a later restart: the clock goes on from where it stopped
        events.append(LogEvent(row, line, "step", elapsed=offset + seconds, step=step, steps=step - last))
        previous, last = seconds, step
    return Reading(events)
