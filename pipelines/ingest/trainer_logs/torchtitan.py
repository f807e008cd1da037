"""torchtitan logs (Python logging lines, `[titan] 2025-04-01 00:25:47,084 - root - INFO - …`, or with
torchrun's `[rank0]:` prefix): its metrics lines (`step: N  loss: …  memory: …  tps: …  tflops: …
mfu: …%`), "Training starts at step N" with the batch it states, and its checkpoint saves and loads.
Only rank 0's lines are read where ranks are marked: the others repeat them."""

from __future__ import annotations

import re
from datetime import datetime

from pipelines.ingest.trainer_logs.events import LogEvent, Reading, figure
from pipelines.ingest.trainer_logs.run_yaml import RunYaml

ANSI = re.compile(r"\x1b\[[0-9;]*m")
RANK = re.compile(r"^\s*(?:\[rank(?P<a>\d+)\]:|(?P<b>\d+):\s)")
LOGGED = re.compile(r"(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}),(?P<ms>\d{3}) - [^-]+ - [A-Z]+ - (?P<msg>.*)$")
STEP = re.compile(r"^step:\s*(?P<step>\d+)(?:/\d+)?\b.*?\bloss:")
FIELD = re.compile(r"\b(?P<key>tps|tflops|mfu):\s*(?P<value>[\d,.]+|nan|inf)")
STARTS = re.compile(r"Training starts at step (?P<step>\d+)")
BATCH = re.compile(r"global batch size (?P<n>\d+)")
SEQ = re.compile(r"sequence length (?P<n>\d+)")
SAVING = re.compile(r"^Saving (?:the|a (?:full|model (?:weights )?only)) checkpoint(?:.*?\bstep (?P<step>\d+))?")
SAVED = re.compile(r"^(?:Finished saving the checkpoint|Last step checkpoint completed)")
LOADING = re.compile(r"^Loading the checkpoint(?:.*?\bstep[- ](?P<step>\d+))?")
LOADED = re.compile(r"^Finished loading the checkpoint")


def recognises(name: str, text: str) -> bool:
    return any(STEP.match(_message(line)[1] or "") for line in text.splitlines()[:5000])


def _message(line: str) -> tuple[datetime | None, str | None]:
    m = LOGGED.search(ANSI.sub("", line))
    if not m:
        return None, None
    return datetime.strptime(f"{m['ts']}.{m['ms']}", "%Y-%m-%d %H:%M:%S.%f"), m["msg"].strip()


def read(text: str, rel: str, meta: RunYaml) -> Reading:
    lines = text.splitlines()
    ranked = any(RANK.match(line) for line in lines[:200])
    events: list[LogEvent] = []
    facts: dict[str, int] = {}
    last = None            # the last step printed
    loading_step = None
    for n, line in enumerate(lines, start=1):
        if ranked and (r := RANK.match(line)) and int(r["a"] or r["b"]) != 0:
            continue
        wall, msg = _message(line)
        if msg is None:
            continue
        if m := STARTS.search(msg):
            first = int(m["step"])
            facts |= {k: int(x["n"]) for k, rx in (("global_batch_size", BATCH), ("seq_len", SEQ)) if (x := rx.search(msg))}
            # training begins here: start-up (or a restart) ends with it
            events.append(LogEvent(n, line, "step", wall=wall, step=first - 1, steps=0, tokens=0))
            last = first - 1
        elif m := STEP.match(msg):
            step = int(m["step"])
            if last is not None and step < last:
                events.append(LogEvent(n, line, "step", wall=wall, step=step, reason=(
                    f"step {step} after step {last} with no 'Training starts' line between: the steps it "
                    "counts from are unknown")))
                last = step
                continue
            values = {f["key"]: figure(f["value"]) for f in FIELD.finditer(msg)}
            mfu = values.get("mfu")
            events.append(LogEvent(n, line, "step", wall=wall, step=step, steps=step - (last or 0),
                                   reported_tflops=values.get("tflops"),
                                   reported_mfu=mfu / 100 if mfu is not None else None))
            last = step
        elif m := SAVING.match(msg):
            events.append(LogEvent(n, line, "checkpoint_started", wall=wall,
                                   step=int(m["step"]) if m["step"] else last))
        elif SAVED.match(msg):
            started = next((e for e in reversed(events) if e.event == "checkpoint_started"), None)
            events.append(LogEvent(n, line, "checkpoint_saved", wall=wall,
                                   step=started.step if started is not None else last))
        elif m := LOADING.match(msg):
            loading_step = int(m["step"]) if m["step"] else None
        elif LOADED.match(msg):
            events.append(LogEvent(n, line, "checkpoint_loaded", wall=wall, step=loading_step))
    # a load that did not name its step is the one the next "Training starts at step N" resumes after
    for i, ev in enumerate(events):
        if ev.event == "checkpoint_loaded" and ev.step is None:
            ev.step = next((e.step for e in events[i + 1:] if e.event == "step"), None)
            if ev.step is None:
                ev.reason = "a checkpoint load that names no step, and no step follows it"
    return Reading(events, facts)
