"""Each trainer log format read into trainer events: steps, tokens, checkpoints and times as the log
says them (tests/support/trainer_logs.py writes the logs in each framework's own line format)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from pipelines.ingest.ignored import ignored_files
from pipelines.ingest.sources import TRAINER_LOGS
from pipelines.ingest.trainer_logs.read import parse
from pipelines.landing.source import fingerprint
from tests.support import trainer_logs as logs

T0 = datetime(2026, 11, 2, 0, 10)
TPS = 64 * 4096  # tokens per step
RUN_YAML = "run_id: r1\njob_id: '812'\n"
MIN = timedelta(minutes=1)


def _parse(tmp_path: Path, name: str, text: str, run_yaml: str | None = RUN_YAML, folder: str = "r1"):
    d = tmp_path / "runs" / "logs" / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(text)
    if run_yaml is not None:
        (d / "run.yaml").write_text(run_yaml)
    return parse(d / name, f"runs/logs/{folder}/{name}")


def _rows(parsed, *columns, event: str | None = None):
    rows = parsed.rows if event is None else parsed.rows.filter(event=event)
    return [tuple(r) for r in rows.sort("ts", maintain_order=True).select(*columns).iter_rows()]


def _reasons(parsed) -> list[str]:
    return parsed.rejects["reason"].to_list()


def test_megatron_steps_tokens_saves_timers_and_its_clock(tmp_path):
    t = logs.Training(T0, 0, 1600, saves=(1000,), tflops=412.3)
    # the node's clock is an hour ahead of UTC in November: its printed times are read in its zone
    p = _parse(tmp_path, "slurm-812.out", logs.megatron(t, timers=True), "run_id: r1\nseq_len: 4096\ntimezone: Europe/Berlin\n")
    assert p.rejects.height == 0, _reasons(p)
    hour = timedelta(hours=1)
    steps = _rows(p, "ts", "step", "tokens", "reported_tflops", "data_seconds", event="step")
    # training began 100 iterations × 6 s before the first printed one: start-up ends there, not at 00:20
    assert steps[0] == (T0 - hour, 0, 0, None, None)
    assert steps[1:] == [(t.at(s) - hour, s, 100 * TPS, 412.3, pytest.approx(12.0)) for s in t.printed]  # 120 ms × 100
    assert _rows(p, "event", "ts", "step", event="checkpoint_saved") == [("checkpoint_saved", t.at(1000) - hour, 1000)]
    assert _rows(p, "ts", event="checkpoint_started") == [(t.at(1000) - hour,)]
    assert set(p.rows["log_format"]) == {"megatron"} and set(p.rows["job_id"]) == {"812"}  # sbatch's slurm-<job>.out


def test_megatron_resumed_log_counts_from_its_checkpoint_and_times_the_save(tmp_path):
    t = logs.Training(T0, 1000, 1400, loaded=True, saves=(1200,))
    text = logs.megatron(t).replace(
        "to /ckpt [ t 1/1, p 1/1 ]\n",
        "to /ckpt [ t 1/1, p 1/1 ]\n(min, max) time across ranks (ms):\n    save-checkpoint ................................: (41000.00, 42500.00)\n", 1)
    p = _parse(tmp_path, "train.log", text, "run_id: r1\njob_ids: {train.log: 907}\nglobal_batch_size: 64\nseq_len: 4096\n")
    assert p.rejects.height == 0, _reasons(p)
    assert _rows(p, "event", "ts", "step", event="checkpoint_loaded") == [("checkpoint_loaded", T0, 1000)]
    steps = _rows(p, "step", "tokens", event="step")
    assert steps == [(1000, 0), *[(s, 100 * TPS) for s in t.printed]]  # the resumed iterations only
    # the save began at the iteration it follows and took the save-checkpoint timer's slowest rank
    assert _rows(p, "ts", event="checkpoint_saved") == [(t.at(1200) + timedelta(seconds=42.5),)]
    assert set(p.rows["job_id"]) == {"907"}


def test_megatron_batch_the_log_states_against_run_yaml_is_refused_naming_both(tmp_path):
    t = logs.Training(T0, 0, 300)
    p = _parse(tmp_path, "slurm-1.out", logs.megatron(t), "run_id: r1\nglobal_batch_size: 128\nseq_len: 4096\n")
    assert p.rows.filter(event="step").height == 1   # only where training began, which states no batch
    assert set(_reasons(p)) == {"the log states global_batch_size 64, run.yaml 128: which is right is for the "
                                "run's owner to say"}
    assert p.rejects["row_ref"].to_list() == ["line 2", "line 3", "line 4"]


def test_tokens_it_cannot_count_say_what_is_missing(tmp_path):
    p = _parse(tmp_path, "slurm-1.out", logs.megatron(logs.Training(T0, 0, 100)), None)
    assert _reasons(p) == ["tokens per step unknown: the log prints no tokens, and neither it nor run.yaml gives the "
                           "sequence length (seq_len); set tokens_per_step, or global_batch_size and seq_len, in run.yaml"]


def test_megatron_nan_throughput_is_no_reading(tmp_path):
    t = logs.Training(T0, 0, 200, tflops=400.0)
    p = _parse(tmp_path, "slurm-1.out", logs.megatron(t).replace("(TFLOP/s/GPU): 400.0", "(TFLOP/s/GPU): nan", 1),
               "run_id: r1\nseq_len: 4096\n")
    assert [r[0] for r in _rows(p, "reported_tflops", event="step")] == [None, None, 400.0]


def test_torchtitan_rank_zero_ansi_batch_it_states_mfu_and_checkpoints(tmp_path):
    first = logs.Training(T0, 0, 1200, saves=(1000,), tflops=301.5, mfu=0.3048)
    p = _parse(tmp_path, "job-a.log", logs.torchtitan(first), "run_id: r1\njob_ids: {job-a.log: '812'}\n")
    assert p.rejects.height == 0, _reasons(p)
    steps = _rows(p, "ts", "step", "tokens", "reported_mfu", "reported_tflops", event="step")
    assert steps[0] == (T0, 0, 0, None, None)                      # "Training starts at step 1"
    assert steps[1:] == [(first.at(s), s, 100 * TPS, pytest.approx(0.3048), 301.5) for s in first.printed]  # rank 1 left out
    assert _rows(p, "event", "step", event="checkpoint_saved") == [("checkpoint_saved", 1000)]
    resumed = logs.Training(T0 + 200 * MIN, 1000, 1300, loaded=True)
    p = _parse(tmp_path, "job-b.log", logs.torchtitan(resumed), "run_id: r1\n", folder="r2")
    loaded = _rows(p, "ts", "step", event="checkpoint_loaded")
    assert loaded == [(T0 + 200 * MIN, 1000)]
    assert _rows(p, "step", "tokens", event="step")[:2] == [(1000, 0), (1100, 100 * TPS)]


def test_nanogpt_timer_restart_after_warmup_counts_every_token_and_leaves_the_warmup_in_startup(tmp_path):
    t = logs.Training(T0, 0, 500, every=100)
    p = _parse(tmp_path, "train.txt", logs.nanogpt(t, warmup=10),
               "run_id: r1\ntokens_per_step: 262144\nstart: 2026-11-02T00:10:00Z\n")
    assert p.rejects.height == 0, _reasons(p)
    steps = _rows(p, "ts", "step", "tokens", event="step")
    assert sum(s[2] for s in steps) == 500 * TPS                    # warm-up steps' tokens too
    # the first step event (start-up's end) is where the timer restarted, after the 10 warm-up steps
    assert steps[0] == (T0 + timedelta(seconds=10 * 6), 10, 10 * TPS)
    assert steps[1:] == [(T0 + timedelta(seconds=10 * 6 + (s - 10) * 6), s, TPS) for s in range(11, 501)]


def test_nanogpt_without_start_says_to_set_it(tmp_path):
    p = _parse(tmp_path, "train.txt", logs.nanogpt(logs.Training(T0, 0, 200)), "run_id: r1\ntokens_per_step: 8\n")
    assert p.rows.height == 0
    assert set(_reasons(p)) == {"the log prints no wall-clock time: set start (the wall-clock time of the log's zero) "
                                "in run.yaml"}


def test_hf_trainer_state_pace_tokens_saves_evaluations_and_a_resumed_state(tmp_path):
    t = logs.Training(T0, 0, 1500)
    p = _parse(tmp_path, "trainer_state.json", logs.hf_trainer_state(t, save_steps=1000),
               "run_id: r1\nstart: 2026-11-02T00:10:00Z\nglobal_batch_size: 64\nseq_len: 4096\n")
    assert p.rejects.height == 0, _reasons(p)
    # train_runtime over the steps run gives the pace: 6 s a step
    assert _rows(p, "ts", "step", "tokens", event="step") == [(T0, 0, 0)] + [(t.at(s), s, 100 * TPS) for s in t.printed]
    assert _rows(p, "ts", "step", event="checkpoint_saved") == [(t.at(1000), 1000)]
    assert _rows(p, "ts", event="eval_done") == [(t.at(500),), (t.at(1000),), (t.at(1500),)]
    assert _rows(p, "ts", event="eval_started")[0] == (t.at(500) - timedelta(seconds=30),)
    resumed = logs.Training(T0 + 300 * MIN, 1000, 1300)
    p = _parse(tmp_path, "trainer_state.json",
               logs.hf_trainer_state(resumed, earlier=list(range(100, 1001, 100)), runtime=False),
               "run_id: r1\nresume_step: 1000\nstart: 2026-11-02T05:10:00Z\nend: 2026-11-02T05:40:00Z\n"
               "tokens_per_step: 262144\n", folder="r1b")
    assert p.rejects.height == 0, _reasons(p)
    assert _rows(p, "event", "step", event="checkpoint_loaded") == [("checkpoint_loaded", 1000)]
    # the history it repeats up to step 1000 is the earlier job's; its own steps on the pace of start..end
    assert _rows(p, "ts", "step", "tokens", event="step") == [(resumed.at(1000), 1000, 0)] + [
        (resumed.at(s), s, 100 * TPS) for s in resumed.printed]


def test_lightning_metrics_csv_with_and_without_its_own_times(tmp_path):
    t = logs.Training(T0, 0, 600)
    yaml = "run_id: r1\ntokens_per_step: 262144\nsave_steps: 500\n"
    p = _parse(tmp_path, "metrics.csv", logs.lightning_csv(t, timestamps=True), yaml)
    assert p.rejects.height == 0, _reasons(p)
    assert _rows(p, "ts", "step", "tokens", event="step")[1:] == [(t.at(s), s, 100 * TPS) for s in t.printed]
    assert _rows(p, "ts", "step", event="checkpoint_saved") == [(t.at(500), 500)]   # run.yaml's save_steps
    p = _parse(tmp_path, "metrics.csv", logs.lightning_csv(t),
               yaml + "start: 2026-11-02T00:10:00Z\nend: 2026-11-02T01:10:00Z\n", folder="r2")
    assert _rows(p, "ts", "step", event="step") == [(T0, 0)] + [(t.at(s), s) for s in t.printed]  # even pace


def test_a_log_it_cannot_place_or_a_format_it_does_not_hold_is_refused_by_name(tmp_path):
    p = _parse(tmp_path, "notes.txt", "loss went down\n", None)
    assert _reasons(p)[0].startswith("not a trainer log gpuledger can place: no Megatron-LM iteration line")
    p = _parse(tmp_path, "x.log", logs.nanogpt(logs.Training(T0, 0, 100)), "format: megatron\n", folder="r2")
    assert _reasons(p) == ["run.yaml says format megatron, but the file has none of its lines "
                           "(docs/ingest/trainer-logs.md, section megatron)"]
    p = _parse(tmp_path, "x.log", "whatever\n", "run_id: r1\ntoken_per_step: 8\n", folder="r3")
    assert _reasons(p) == ["run.yaml beside it: unknown key token_per_step (did you mean tokens_per_step?)"]
    p = _parse(tmp_path, "x.log", "whatever\n", "format: megatorn\n", folder="r4")
    assert _reasons(p) == ["run.yaml beside it: format: format 'megatorn' is none of megatron, torchtitan, nanogpt, "
                           "hf_trainer_state, lightning_csv (did you mean megatron?)"]


def test_run_yaml_is_part_of_its_logs_fingerprint_and_no_ignored_file(tmp_path):
    log = tmp_path / "runs" / "logs" / "r1" / "slurm-1.out"
    log.parent.mkdir(parents=True)
    log.write_text(logs.megatron(logs.Training(T0, 0, 100)))
    before = fingerprint(log, TRAINER_LOGS.sidecar)
    (log.parent / "run.yaml").write_text("seq_len: 4096\n")
    with_yaml = fingerprint(log, TRAINER_LOGS.sidecar)
    (log.parent / "run.yaml").write_text("seq_len: 2048\n")
    assert len({before, with_yaml, fingerprint(log, TRAINER_LOGS.sidecar)}) == 3
    assert fingerprint(log) == before                                   # the file alone, as other sources see it
    assert ignored_files(tmp_path) == []


def test_a_log_appended_to_counts_each_stretch_from_its_own_start(tmp_path):
    """A requeued Slurm job appends to its slurm-<job>.out: a resumed stretch counts from its load and
    begins where its first iteration says; iterations going back with no load are refused by name."""
    first = logs.Training(T0, 0, 300, saves=(200,))
    again = logs.Training(T0 + 60 * MIN, 200, 400, loaded=True)
    p = _parse(tmp_path, "slurm-9.out", "\ufeff" + logs.megatron(first) + logs.megatron(again), "seq_len: 4096\n")
    assert p.rejects.height == 0, _reasons(p)
    steps = _rows(p, "ts", "step", "tokens", event="step")
    assert steps == [(T0, 0, 0), *[(first.at(s), s, 100 * TPS) for s in first.printed],
                     (T0 + 60 * MIN, 200, 0), *[(again.at(s), s, 100 * TPS) for s in again.printed]]
    scratch = logs.megatron(first) + logs.megatron(logs.Training(T0 + 60 * MIN, 0, 200))
    p = _parse(tmp_path, "slurm-10.out", scratch, "seq_len: 4096\n", folder="r2")
    assert _reasons(p)[0] == ("iteration 100 after iteration 300 with no checkpoint load line between: the "
                              "iterations it counts from are unknown")
    assert p.rows.filter(event="step")["step"].to_list()[-1] == 200   # and counts on from the refused one


MEGATRON_ARGS = {"num_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128,
                 "seq_length": 4096, "global_batch_size": 64, "micro_batch_size": 1, "bf16": True, "fp16": False,
                 "fp8": None, "tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 1, "train_iters": 100000}


def test_megatron_arguments_it_prints_give_tokens_and_the_model_without_run_yaml(tmp_path):
    t = logs.Training(T0, 0, 200)
    p = _parse(tmp_path, "slurm-5.out", logs.megatron(t, arguments=MEGATRON_ARGS, parameters=6_738_415_616), None,
               folder="llm-7b")
    assert p.rejects.height == 0, _reasons(p)
    assert _rows(p, "step", "tokens", event="step")[1:] == [(100, 100 * TPS), (200, 100 * TPS)]
    assert _rows(p, "run_id", "ts", "dtype", "model_params", "model_layers", "model_heads", "model_head_dim",
                 "model_seq_len", event="run_config") == [("llm-7b", T0, "bf16", 6_738_415_616.0, 32, 32, 128, 4096)]


def test_megatron_model_that_run_yaml_states_differently_is_no_run_config(tmp_path):
    t = logs.Training(T0, 0, 200)
    p = _parse(tmp_path, "slurm-5.out", logs.megatron(t, arguments=MEGATRON_ARGS, parameters=6_738_415_616),
               "model: {params: 6.7e9, layers: 32, heads: 64, head_dim: 128, seq_len: 4096}\n")
    assert p.rows.filter(event="run_config").height == 0
    assert _reasons(p) == ["the log and run.yaml state the model differently (heads 32 in the log, 64 in run.yaml; "
                           "params 6738415616 in the log, 6700000000 in run.yaml): which is right is for the run's "
                           "owner to say"]
    assert p.rows.filter(event="step").height == 3      # its steps still count


def test_megatron_deepspeed_lines_without_dates_take_their_time_per_iteration_and_tokens(tmp_path):
    """Megatron-DeepSpeed (BLOOM's logs) prints no [date time], its time per iteration in seconds, the
    tokens it consumed and `TFLOPs`: timed from run.yaml's start, tokens as it counts them."""
    lines = [f" iteration {s:8d}/  115311 | consumed samples: {s * 64:12d} | consumed tokens: {s * TPS:14d} |"
             f" elapsed time per iteration (s): 6.00 | learning rate: 6.000E-05 | global batch size:    64 |"
             f" lm loss: 2.345678E+00 | loss scale: 4096.0 | grad norm: 0.312 | number of skipped iterations:   0 |"
             f" number of nan iterations:   0 | samples per second: 10.667 | TFLOPs: 148.72 |" for s in (100, 200, 300)]
    p = _parse(tmp_path, "slurm-3.out", "\n".join(lines) + "\n", "start: 2026-11-02T00:10:00Z\n")
    assert p.rejects.height == 0, _reasons(p)
    assert _rows(p, "ts", "step", "tokens", "reported_tflops", event="step") == [(T0, 0, 0, None)] + [
        (T0 + timedelta(seconds=6 * s), s, 100 * TPS, 148.72) for s in (100, 200, 300)]
    p = _parse(tmp_path, "slurm-3.out", "\n".join(lines) + "\n", None, folder="r2")
    assert set(_reasons(p)) == {"the log prints no wall-clock time: set start (the wall-clock time of the log's zero) "
                                "in run.yaml"}
