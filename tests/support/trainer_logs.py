"""Trainer logs written the way each framework writes them, from one description of a job's training
(`Training`), for the tests. Imports nothing from the pipeline: the line formats are the frameworks'
own (Megatron-LM's training_log and checkpointing prints, torchtitan's metrics and checkpoint logger
lines, modded-nanogpt's step lines, Hugging Face Trainer's trainer_state.json, Lightning's CSVLogger
metrics.csv)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta


@dataclass
class Training:
    """One job's training: it begins at `begins` from step `first` (a resumed job loaded it), runs a
    step every `step_s` seconds to step `last`, prints every `every` steps and saves at `saves`."""

    begins: datetime
    first: int
    last: int
    step_s: float = 6.0
    every: int = 100
    saves: tuple[int, ...] = ()
    loaded: bool = False           # it resumed from a checkpoint at `first`
    batch: int = 64                # sequences per step
    seq: int = 4096
    tflops: float | None = None    # per GPU, as the framework prints it
    mfu: float | None = None       # fraction, torchtitan
    loaded_at: datetime | None = None  # torchtitan: when the load finished
    extra: dict = field(default_factory=dict)

    def at(self, step: int) -> datetime:
        return self.begins + timedelta(seconds=(step - self.first) * self.step_s)

    @property
    def printed(self) -> list[int]:
        return [s for s in range(self.first + 1, self.last + 1) if s % self.every == 0]

    @property
    def tokens_per_step(self) -> int:
        return self.batch * self.seq


def megatron_arguments(args: dict[str, object]) -> list[str]:
    """The block Megatron-LM prints at start (arguments.py `_print_args`): sorted, dotted to column 48."""
    lines = [f"  {k} {'.' * (48 - len(k))} {v}" for k, v in args.items()]
    return (["------------------------ arguments ------------------------"] + sorted(lines, key=str.lower)
            + ["-------------------- end of arguments ---------------------"])


def megatron(t: Training, *, timers: bool = False, arguments: dict[str, object] | None = None,
             parameters: int | None = None) -> str:
    out = megatron_arguments(arguments) if arguments else []
    if parameters:
        out.append(f" > number of parameters on (tensor, pipeline) model parallel rank (0, 0): {parameters}")
    if t.loaded:
        out += [f" loading checkpoint from /ckpt at iteration {t.first}",
                f"  successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] at iteration {t.first}"]
    out.append(f"[before the start of training step] datetime: {t.begins:%Y-%m-%d %H:%M:%S}")
    for s in t.printed:
        line = (f" [{t.at(s):%Y-%m-%d %H:%M:%S}] iteration {s:8d}/{100000:8d} | consumed samples: {s * t.batch:12d} |"
                f" elapsed time per iteration (ms): {t.step_s * 1000:.1f} |")
        if t.tflops is not None:
            line += f" throughput per GPU (TFLOP/s/GPU): {t.tflops:.1f} |"
        line += (f" learning rate: 3.000000E-04 | global batch size: {t.batch:5d} | lm loss: 2.345678E+00 |"
                 f" loss scale: 1.0 | grad norm: 0.812 | number of skipped iterations:   0 | number of nan iterations:   0 |")
        out.append(line)
        if timers:
            out += ["(min, max) time across ranks (ms):",
                    "    forward-backward ...............................: (5000.12, 5010.50)",
                    "    batch-generator ................................: (100.00, 120.00)"]
        if s in t.saves:
            out += [f"saving checkpoint at iteration {s:7d} to /ckpt in torch_dist format",
                    f"  successfully saved checkpoint from iteration {s:7d} to /ckpt [ t 1/1, p 1/1 ]"]
    return "\n".join(out) + "\n"


def _titan(ts: datetime, msg: str, rank: int = 0) -> str:
    return f"[rank{rank}]:{ts:%Y-%m-%d %H:%M:%S},{ts.microsecond // 1000:03d} - root - INFO - {msg}"


def torchtitan(t: Training) -> str:
    out = []
    if t.loaded:
        done = t.loaded_at or t.begins
        out += [_titan(done - timedelta(seconds=50), f"Loading the checkpoint at step {t.first}."),
                _titan(done, "Finished loading the checkpoint in 50.00 seconds.")]
    starts = (f"Training starts at step {t.first + 1}, with local batch size 8, global batch size {t.batch}, "
              f"sequence length {t.seq}, total steps 100000 (warmup 200)")
    out += [_titan(t.begins, starts), _titan(t.begins, starts, rank=1)]
    for s in t.printed:
        tflops = f"  tflops: {t.tflops:,.2f}" if t.tflops is not None else ""
        mfu = f"  mfu: {t.mfu * 100:.2f}%" if t.mfu is not None else ""
        tps = round(t.tokens_per_step / t.step_s / 8)
        msg = f"\x1b[31mstep: {s:2}  \x1b[32mloss:  2.3457  \x1b[33mmemory: 71.32GiB(90.09%)  \x1b[34mtps: {tps:,}{tflops}{mfu}\x1b[39m"
        out += [_titan(t.at(s), msg), _titan(t.at(s), msg, rank=1)]
        if s in t.saves:
            out += [_titan(t.at(s), "Saving the checkpoint (or staging if async is enabled)."),
                    _titan(t.at(s), "Finished saving the checkpoint (or staging if async is enabled)in 0.00 seconds.")]
    return "\n".join(out) + "\n"


def nanogpt(t: Training, warmup: int = 0) -> str:
    """modded-nanogpt's lines, one a step as it prints them; with `warmup`, the timer restarts after that
    many steps (their time is not counted on it), as modded-nanogpt resets it after compile warm-up."""
    out = [f"step:{t.first}/{100000} val_loss:10.8258 train_time:0ms step_avg:nanms"]
    for s in range(t.first + 1, t.last + 1):
        done = s - t.first
        ms = (done - warmup if done > warmup else done) * t.step_s * 1000
        out.append(f"step:{s}/{100000} train_loss:2.3457 train_time:{ms:.0f}ms step_avg:{t.step_s * 1000:.2f}ms")
        if s % (t.every * 5) == 0:
            out.append(f"step:{s}/{100000} val_loss:3.2800 train_time:{ms:.0f}ms step_avg:{t.step_s * 1000:.2f}ms")
    return "\n".join(out) + "\n"


def hf_trainer_state(t: Training, *, earlier: list[int] = (), runtime: bool = True, save_steps: int = 0) -> str:
    """`earlier`: the steps a resumed Trainer's state repeats from the run it resumed."""
    history = [{"epoch": round(s / 1e4, 4), "grad_norm": 0.81, "learning_rate": 3e-4, "loss": 2.3457, "step": s}
               for s in [*earlier, *t.printed]]
    history += [{"epoch": round(s / 1e4, 4), "eval_loss": 3.28, "eval_runtime": 30.0, "eval_samples_per_second": 10.0,
                 "step": s} for s in t.printed if s % (t.every * 5) == 0]
    history.sort(key=lambda e: (e["step"], "eval_loss" in e))
    if runtime:
        history.append({"epoch": 1.0, "step": t.last, "total_flos": 1.0e18, "train_loss": 2.4,
                        "train_runtime": (t.last - t.first) * t.step_s, "train_samples_per_second": 10.0,
                        "train_steps_per_second": 1 / t.step_s})
    state = {"best_metric": None, "epoch": 1.0, "eval_steps": t.every * 5, "global_step": t.last,
             "is_hyper_param_search": False, "is_local_process_zero": True, "is_world_process_zero": True,
             "log_history": history, "logging_steps": t.every, "max_steps": 100000, "num_train_epochs": 1,
             "save_steps": save_steps, "total_flos": 1.0e18, "train_batch_size": 8}
    return json.dumps(state, indent=2) + "\n"


def lightning_csv(t: Training, *, timestamps: bool = False) -> str:
    buf = io.StringIO()
    columns = ["epoch", "step", "train_loss", "val_loss", "lr-AdamW"] + (["timestamp"] if timestamps else [])
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for s in t.printed:
        stamp = [f"{t.at(s).timestamp():.3f}"] if timestamps else []
        w.writerow([0, s, "2.3457", "", "0.0003", *stamp])
        if s % (t.every * 5) == 0:
            w.writerow([0, s, "", "3.28", "", *([""] if timestamps else [])])
    return buf.getvalue()
