"""Hugging Face Transformers `trainer_state.json` (what Trainer writes beside each checkpoint and at
the end): `log_history`'s training entries as steps, `save_steps` (or a `checkpoint-N` folder) as
checkpoint saves, evaluation entries as evaluations. Its entries carry no time: a step s is at
`start + (s − resumed step) × seconds per step`, the seconds per step being the final entry's
`train_runtime` over the steps it ran, else run.yaml's `end − start` over them: an even pace.
A resumed Trainer's state repeats the history it resumed from: entries up to run.yaml's
`resume_step` are the earlier job's, and left to its own log."""

from __future__ import annotations

import json
import re

from pipelines.ingest.trainer_logs.events import LogEvent, Reading
from pipelines.ingest.trainer_logs.run_yaml import RunYaml

CHECKPOINT_FOLDER = re.compile(r"(?:^|/)checkpoint-(?P<step>\d+)/[^/]+$")


def recognises(name: str, text: str) -> bool:
    return name == "trainer_state.json"


def read(text: str, rel: str, meta: RunYaml) -> Reading:
    try:
        state = json.loads(text)
    except ValueError as err:
        return Reading([LogEvent(1, text[:200], "step", reason=f"not JSON: {err}")])
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        return Reading([LogEvent(1, text[:200], "step", reason="no log_history list: not a trainer_state.json")])
    resumed = meta.resume_step or 0
    steps = [s for e in history if isinstance(e, dict) and (s := _int(e.get("step"))) is not None]
    global_step = _int(state.get("global_step")) or max(steps, default=0)
    runtime = next((e["train_runtime"] for e in reversed(history)
                    if isinstance(e, dict) and isinstance(e.get("train_runtime"), (int, float))), None)
    ran = global_step - resumed
    pace = runtime / ran if runtime and ran > 0 else meta.seconds_per_step(ran)

    def at(step: int) -> float | None:
        return (step - resumed) * pace if pace else None

    # training began at the step it resumed from (run.yaml's `resume_step` is its load: events.py)
    events = [LogEvent(1, "log_history", "step", elapsed=at(resumed), step=resumed, steps=0, tokens=0)]
    last, seen = resumed, None
    for i, entry in enumerate(history, start=1):
        shown = json.dumps(entry)[:1000]
        step = _int(entry.get("step")) if isinstance(entry, dict) else None
        if step is None:
            events.append(LogEvent(i, shown, "step", reason=f"log_history entry {i} has no integer step"))
            continue
        tokens_seen = _int(entry.get("num_input_tokens_seen"))
        if step <= resumed:
            seen = tokens_seen if tokens_seen is not None else seen
            continue
        if "loss" in entry and step > last:
            tokens = tokens_seen - seen if tokens_seen is not None and seen is not None else None
            events.append(LogEvent(i, shown, "step", elapsed=at(step), step=step, steps=step - last, tokens=tokens))
            last, seen = step, tokens_seen if tokens_seen is not None else seen
        elif "eval_loss" in entry and isinstance(entry.get("eval_runtime"), (int, float)) and pace:
            # an evaluation ends at its step's time on the even pace, having run its own eval_runtime
            done = at(step)
            events += [LogEvent(i, shown, "eval_started", elapsed=max(0.0, done - entry["eval_runtime"]), step=step),
                       LogEvent(i, shown, "eval_done", elapsed=done, step=step)]
    save_steps = _int(state.get("save_steps"))
    saves = {s for s in range(save_steps, global_step + 1, save_steps) if s > resumed} if save_steps else set()
    if m := CHECKPOINT_FOLDER.search(rel):
        saves.add(int(m["step"]))
    events += [LogEvent(1, f"checkpoint-{s}", "checkpoint_saved", elapsed=at(s), step=s) for s in sorted(saves)]
    events.sort(key=lambda e: e.elapsed if e.elapsed is not None else float("inf"))
    return Reading(events)


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
