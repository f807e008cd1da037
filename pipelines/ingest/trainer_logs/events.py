"""What a format reader gives (`LogEvent`s in the log's order), and how they become the trainer events
of docs/ingest/runs.md: times resolved (the log's wall clock in run.yaml's zone, or its elapsed seconds
after run.yaml's `start`), tokens counted (what the log prints, else steps × tokens per step), and a
value the log states that contradicts run.yaml refused, naming both."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipelines.ingest.trainer_logs.run_yaml import RunYaml


@dataclass
class LogEvent:
    row: int                                 # the line (or entry) of the log it was read from, 1-based
    line: str                                # the line itself: the payload if it is refused
    event: str                               # one of docs/ingest/runs.md's events
    wall: datetime | None = None             # the time the log prints (zoned, or in run.yaml's zone)
    elapsed: float | None = None             # or seconds since the log's zero (run.yaml `start`)
    step: int | None = None
    steps: int | None = None                 # step events: steps since the previous step event
    tokens: int | None = None                # step events: tokens since the previous one, where the log says
    reported_mfu: float | None = None        # the log's own MFU (0–1) and TFLOP/s per GPU
    reported_tflops: float | None = None
    data_seconds: float | None = None
    comm_seconds: float | None = None
    stated: dict[str, int] = field(default_factory=dict)  # what the log states of run.yaml's keys
    reason: str | None = None                # why the reader refuses it
    # an event the log prints no time for (a checkpoint line) is this many seconds after the nearest
    # time before it (else at the nearest after): a save's end is its start plus the save's timer
    after: float = 0.0


TIME = "time"  # an event that is only a time the log prints (Megatron's `datetime:` lines): not staged


@dataclass
class Reading:
    events: list[LogEvent]
    facts: dict[str, int] = field(default_factory=dict)  # what the log states once, for all its lines
    model: dict[str, float] = field(default_factory=dict)  # the model's shape, as run_config's `model` keys
    dtype: str | None = None


def resolve(reading: Reading, meta: RunYaml) -> list[dict]:
    """The events as records of text fields (as a JSONL line has them), each with `_row`, `_line` and
    `_error` (why it is refused, or None)."""
    events = declared_checkpoints(reading.events, meta)
    times = _times(events, meta)
    out = []
    for ev, ts in zip(events, times):
        if ev.event == TIME:
            continue
        reason = ev.reason or _conflict({**reading.facts, **ev.stated}, meta)
        tokens = ev.tokens
        if ev.event == "step" and tokens is None and reason is None:
            per_step = _tokens_per_step({**reading.facts, **ev.stated}, meta)
            if per_step is None:
                missing = _unknown({**reading.facts, **ev.stated}, meta)
                reason = (f"tokens per step unknown: the log prints no tokens, and neither it nor run.yaml gives "
                          f"the {' or the '.join(missing)}; set tokens_per_step, or global_batch_size and seq_len, "
                          "in run.yaml")
            else:
                tokens = (ev.steps or 0) * per_step
        if ts is None and reason is None:
            reason = ("the log prints no wall-clock time: set start (the wall-clock time of the log's zero) in "
                      "run.yaml" if ev.elapsed is not None else "no time for this line: the log prints none before or after it")
        out.append({
            "_row": ev.row, "_line": ev.line, "_error": reason,
            "event": ev.event, "ts": ts.isoformat(sep=" ") if ts else None,
            "step": _text(ev.step), "tokens": _text(tokens),
            "reported_mfu": _text(ev.reported_mfu), "reported_tflops": _text(ev.reported_tflops),
            "data_seconds": _text(ev.data_seconds), "comm_seconds": _text(ev.comm_seconds),
        })
    return out


def declared_checkpoints(events: list[LogEvent], meta: RunYaml) -> list[LogEvent]:
    """A log that prints no saves or loads (nanoGPT-style, metrics.csv) takes them from run.yaml: a save
    at each logged step that is a multiple of `save_steps`, and a load of `resume_step` where the log
    begins."""
    kinds = {e.event for e in events}
    steps = [e for e in events if e.event == "step" and e.step is not None and e.reason is None]
    out = list(events)
    if meta.save_steps and "checkpoint_saved" not in kinds:
        for e in steps:
            if e.steps and e.step % meta.save_steps == 0 and e.step > (meta.resume_step or 0):
                out.insert(out.index(e) + 1, LogEvent(e.row, e.line, "checkpoint_saved", wall=e.wall,
                                                      elapsed=e.elapsed, step=e.step))
    if meta.resume_step and "checkpoint_loaded" not in kinds and steps:
        first = steps[0]
        out.insert(out.index(first), LogEvent(first.row, first.line, "checkpoint_loaded", wall=first.wall,
                                              elapsed=first.elapsed, step=meta.resume_step))
    return out


def _times(events: list[LogEvent], meta: RunYaml) -> list[datetime | None]:
    own: list[datetime | None] = []
    for ev in events:
        if ev.wall is not None:
            own.append(meta.utc(ev.wall))
        elif ev.elapsed is not None and meta.start is not None:
            own.append(meta.utc(meta.start) + timedelta(seconds=ev.elapsed))
        else:
            own.append(None)
    filled, last = [], None
    for ev, ts in zip(events, own):
        last = ts if ts is not None else last
        inherits = ts is None and ev.elapsed is None and last is not None
        filled.append(last + timedelta(seconds=ev.after) if inherits else ts)
    nxt = None
    for i in range(len(events) - 1, -1, -1):
        if own[i] is not None:
            nxt = own[i]
        elif filled[i] is None and events[i].elapsed is None:
            filled[i] = nxt
    return filled


def _batch_and_sequence(stated: dict[str, int], meta: RunYaml) -> dict[str, int | None]:
    """The global batch size and sequence length a step is made of: the log's, else run.yaml's."""
    return {"global batch size (global_batch_size)": stated.get("global_batch_size") or meta.global_batch_size,
            "sequence length (seq_len)": stated.get("seq_len") or meta.tokens_per_sequence}


def _tokens_per_step(stated: dict[str, int], meta: RunYaml) -> int | None:
    if meta.tokens_per_step:
        return meta.tokens_per_step
    batch, seq = _batch_and_sequence(stated, meta).values()
    return batch * seq if batch and seq else None


def _unknown(stated: dict[str, int], meta: RunYaml) -> list[str]:
    """What tokens per step lack: the global batch size, the sequence length, or both."""
    return [name for name, known in _batch_and_sequence(stated, meta).items() if not known]


def _conflict(stated: dict[str, int], meta: RunYaml) -> str | None:
    """The log's value wins over run.yaml's default; one that contradicts what run.yaml states is no
    reading of either."""
    given = {"global_batch_size": meta.global_batch_size, "seq_len": meta.seq_len}
    for key, value in stated.items():
        if given.get(key) is not None and given[key] != value:
            return f"the log states {key} {value}, run.yaml {given[key]}: which is right is for the run's owner to say"
    return None


def _text(value) -> str | None:
    return None if value is None else str(value)


def figure(text: str | None) -> float | None:
    """A figure as printed; `nan`, `inf` and text are no reading."""
    try:
        value = float(text.replace(",", "")) if text else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None
