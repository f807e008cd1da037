"""Megatron-LM text logs (what rank 0 prints to stdout, e.g. a Slurm `slurm-<job>.out`): its
iteration lines, checkpoint saves and loads, the `[...] datetime:` lines and, where printed, the
timers of --timing-log-level. Times are the node's wall clock (run.yaml `timezone`)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from pipelines.ingest.trainer_logs.events import TIME, LogEvent, Reading, figure
from pipelines.ingest.trainer_logs.run_yaml import RunYaml

STAMP = "%Y-%m-%d %H:%M:%S"
ITERATION = re.compile(r"(?:\[(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\]\s+)?"
                       r"iteration\s+(?P<it>\d+)\s*/\s*(?P<total>\d+)\s*\|(?P<fields>.*)$")
DATETIME = re.compile(r"\]\s*datetime:\s*(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})")
SAVING = re.compile(r"saving checkpoint at iteration\s+(?P<it>\d+)")
SAVED = re.compile(r"successfully saved checkpoint (?:from|at) iteration\s+(?P<it>\d+)")
LOADED = re.compile(r"(?:successfully loaded checkpoint from|loading checkpoint from) .*?at iteration\s+(?P<it>\d+)")
# a timer line, `name ....: (min, max)` in ms (the max: the rank that held the others up)
TIMER = re.compile(r"^\s*(?P<name>[\w-]+)\s*\.*\s*:\s*\((?P<min>[\d.]+),\s*(?P<max>[\d.]+)\)\s*$")
# per-iteration averages over the log interval (Megatron divides by log_interval before printing)
DATA_TIMERS = ("batch-generator",)
COMM_TIMERS = ("all-grads-sync", "params-all-gather")
SAVE_TIMER = "save-checkpoint"
# the arguments Megatron-LM prints at start (`  seq_length ........ 4096`, arguments.py _print_args)
ARGUMENT = re.compile(r"^\s{2}(?P<name>[a-z_0-9]+) \.{3,} (?P<value>.*?)\s*$")
# rank (0, 0)'s parameters: the model's, when it is in one tensor and pipeline piece
PARAMETERS = re.compile(r"number of parameters on \(tensor, pipeline\) model parallel rank \(0, 0\): (?P<n>\d+)")


def recognises(name: str, text: str) -> bool:
    return any(ITERATION.search(line) for line in text.splitlines()[:5000])


def read(text: str, rel: str, meta: RunYaml) -> Reading:
    events: list[LogEvent] = []
    counted_from: int | None = None   # the iteration this log's next step event counts from
    last_step: LogEvent | None = None
    last_saved: LogEvent | None = None
    args: dict[str, str] = {}
    parameters = None
    clock = 0.0              # seconds since the log's zero, for lines without a printed time
    consumed = None          # tokens consumed at the last iteration line, where the log counts them
    for n, line in enumerate(text.splitlines(), start=1):
        if last_step is None and (m := ARGUMENT.match(line)):
            args.setdefault(m["name"], m["value"])
            continue
        if m := PARAMETERS.search(line):
            parameters = parameters or int(m["n"])
            continue
        if m := ITERATION.search(line):
            it, fields = int(m["it"]), _fields(m["fields"])
            wall = datetime.strptime(m["ts"], STAMP) if m["ts"] else None
            per_iteration = _seconds_per_iteration(fields)
            since = it - (counted_from or 0)
            if since < 0:
                # iterations went back with no load line (a log appended to by a run from scratch, or
                # from an unnamed checkpoint): where this stretch counts from is unknown
                events.append(LogEvent(n, line, "step", step=it, reason=(
                    f"iteration {it} after iteration {counted_from} with no checkpoint load line between: "
                    "the iterations it counts from are unknown")))
                counted_from, last_step = it, None
                continue
            # a line without its [date time] (Megatron-DeepSpeed, Megatron-LM before 2023) is timed by
            # its iterations' time since the log's zero: run.yaml `start`
            elapsed = None if wall is not None or per_iteration is None else clock + per_iteration * since
            if counted_from is None or last_step is None:
                if per_iteration is not None and (wall is not None or elapsed is not None):
                    # where this log's training began: its first printed iteration less the iterations
                    # before it, at the time they took, so start-up (or a restart) ends there, not one log
                    # interval later
                    began = wall - timedelta(seconds=per_iteration * since) if wall is not None else None
                    events.append(LogEvent(n, line, "step", wall=began, elapsed=None if began else clock,
                                           step=it - since, steps=0, tokens=0))
            batch = figure(fields.get("global batch size"))
            tokens = figure(fields.get("consumed tokens"))  # Megatron-DeepSpeed counts them itself
            # since the last line, or since the start of a run from scratch (a resumed one's are unknown)
            before = consumed if consumed is not None else (0 if counted_from is None else None)
            last_step = LogEvent(n, line, "step", wall=wall, elapsed=elapsed, step=it, steps=since,
                                 tokens=int(tokens - before) if tokens is not None and before is not None else None,
                                 reported_tflops=figure(fields.get("throughput per GPU (TFLOP/s/GPU)")
                                                         or fields.get("TFLOPs")),
                                 stated={"global_batch_size": int(batch)} if batch else {})
            if wall is None and elapsed is None:
                last_step.reason = ("an iteration line with neither its [date time] nor its time per iteration: "
                                    "its steps have no time")
            events.append(last_step)
            counted_from, consumed = it, tokens if tokens is not None else consumed
            clock = elapsed if elapsed is not None else clock
        elif m := DATETIME.search(line):
            events.append(LogEvent(n, line, TIME, wall=datetime.strptime(m["ts"], STAMP)))
        elif m := LOADED.search(line):
            counted_from, last_step, consumed = int(m["it"]), None, None  # a resumed stretch: found again
            if events and events[-1].event == "checkpoint_loaded" and events[-1].step == counted_from:
                continue  # "loading … at iteration N", then "successfully loaded … at iteration N": one load
            events.append(LogEvent(n, line, "checkpoint_loaded", step=counted_from))
        elif m := SAVING.search(line):
            events.append(LogEvent(n, line, "checkpoint_started", step=int(m["it"])))
        elif m := SAVED.search(line):
            last_saved = LogEvent(n, line, "checkpoint_saved", step=int(m["it"]))
            events.append(last_saved)
        elif m := TIMER.match(line):
            seconds = float(m["max"]) / 1000
            if m["name"] == SAVE_TIMER and last_saved is not None and last_saved.after == 0:
                last_saved.after = seconds  # the save ended this long after the time it began
            elif last_step is not None and last_step.steps:
                if m["name"] in DATA_TIMERS:
                    last_step.data_seconds = round((last_step.data_seconds or 0) + seconds * last_step.steps, 6)
                elif m["name"] in COMM_TIMERS:
                    last_step.comm_seconds = round((last_step.comm_seconds or 0) + seconds * last_step.steps, 6)
    return _stated(Reading(events), args, parameters)


def _stated(reading: Reading, args: dict[str, str], parameters: int | None) -> Reading:
    """What the printed arguments say of the batch and the model."""
    number = {k: int(v) for k, v in args.items() if v.isdigit()}
    for fact, arg in (("global_batch_size", "global_batch_size"), ("seq_len", "seq_length")):
        if arg in number:
            reading.facts[fact] = number[arg]
    heads, hidden = number.get("num_attention_heads"), number.get("hidden_size")
    shape = {"layers": number.get("num_layers"), "heads": heads, "seq_len": number.get("seq_length"),
             "head_dim": number.get("kv_channels") or (hidden // heads if hidden and heads else None)}
    if parameters and number.get("tensor_model_parallel_size", 1) == 1 and number.get("pipeline_model_parallel_size", 1) == 1:
        shape["params"] = parameters
    reading.model = {k: v for k, v in shape.items() if v}
    dtype = "bf16" if args.get("bf16") == "True" else "fp16" if args.get("fp16") == "True" else None
    reading.dtype = "fp8" if args.get("fp8") not in (None, "None") else dtype
    return reading


def _seconds_per_iteration(fields: dict[str, str]) -> float | None:
    """`elapsed time per iteration (ms)` (Megatron-LM) or `(s)` (older Megatron-DeepSpeed), in seconds."""
    ms = figure(fields.get("elapsed time per iteration (ms)"))
    return ms / 1000 if ms is not None else figure(fields.get("elapsed time per iteration (s)"))


def _fields(text: str) -> dict[str, str]:
    out = {}
    for part in text.split("|"):
        key, sep, value = part.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out
