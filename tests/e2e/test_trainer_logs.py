"""Trainer logs as frameworks write them, through the whole ledger: for every format, a run interrupted
after a checkpoint and resumed from it in a second job loses the GPU-seconds the script below says
(and that the same run logged as JSONL events loses); a run's MFU from a Megatron-LM or torchtitan log
agrees with the log's own figure, and a wrong `heads` in run.yaml shows as a ratio far from 1.

Each run: job A 00:00–03:00 (NODE_FAIL) trains from 00:10, a step every 6 s, saves at step 1000
(01:50) and is lost after it; job B 03:30–06:00 loads step 1000 and trains again from 03:40 to step
2400. Lost: 01:50–03:00 = 70 min; restart: 03:30–03:40 = 10 min; of 8 GPUs each."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal as D

import pytest

from tests.conftest import PROJECT_ROOT
from tests.support import trainer_logs as logs
from tests.support.pipeline import dict_rows, ledger_of
from tests.support.scenario_builder import Activity, Landing, utc

NOV2 = utc(2026, 11, 2).date()
GPUS = 8
TPS = 64 * 4096
LOST_S, RESTART_S = 70 * 60 * GPUS, 10 * 60 * GPUS
FORMATS = ("megatron", "torchtitan", "nanogpt", "hf_trainer_state", "lightning_csv", "jsonl")
# a GPT of 32 layers, hidden 4096 (32 heads of 128), vocabulary 50304, sequences of 4096
L_, H_, V_, S_ = 32, 4096, 50304, 4096
N_MEGATRON = 12 * L_ * H_ ** 2 + V_ * H_   # the parameters Megatron-LM's FLOPs formula implies
N_TITAN = 12 * L_ * H_ ** 2                # torchtitan counts no embedding parameters
PEAK_H100_BF16 = 989e12                    # dense, per GPU (NVIDIA's H100 SXM datasheet)


def _naive(t):
    return t.replace(tzinfo=None)


A = logs.Training(_naive(utc(2026, 11, 2, 0, 10)), 0, 1600, saves=(1000,))
B = logs.Training(_naive(utc(2026, 11, 2, 3, 40)), 1000, 2400, saves=(2000,), loaded=True,
                  loaded_at=_naive(utc(2026, 11, 2, 3, 39, 50)))


def _megatron_tflops(t: logs.Training) -> float:
    """Megatron-LM's own throughput figure (training.py num_floating_point_operations, dense GPT)."""
    flops = 72 * t.batch * t.seq * L_ * H_ ** 2 * (1 + t.seq / (6 * H_) + V_ / (12 * L_ * H_))
    return flops / (t.step_s * GPUS) / 1e12


def _titan_mfu(t: logs.Training) -> float:
    """torchtitan's: 6·N + 12·l·h·q·t FLOPs a token, tokens a second a GPU, over the GPU's peak."""
    per_token = 6 * N_TITAN + 12 * L_ * 32 * 128 * t.seq
    return per_token * t.tokens_per_step / t.step_s / GPUS / PEAK_H100_BF16


def _model(params: float, heads: int = 32) -> str:
    return f"model: {{params: {params}, layers: {L_}, heads: {heads}, head_dim: 128, seq_len: {S_}}}\ndtype: bf16\n"


def _write(L: Landing, folder: str, files: dict[str, str], run_yaml: str) -> None:
    d = L.landing / "runs" / "logs" / folder
    d.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (d / name).write_text(text)
    (d / "run.yaml").write_text(run_yaml)


def _resumed_run(L: Landing, fmt: str, i: int) -> None:
    run, a, b, host = f"r-{fmt}", f"{i}01", f"{i}02", f"t{i}"
    L.node(host)
    L.node_hours(host, utc(2026, 11, 2), 24, D("36.00"))
    L.job("c1", a, account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T03:00:00", state="NODE_FAIL", host=host)
    L.job("c1", b, account="acct1", start="2026-11-02T03:30:00", end="2026-11-02T06:00:00", state="COMPLETED", host=host)
    L.telemetry(host, [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 3), a, True),
                               Activity(utc(2026, 11, 2, 3, 30), utc(2026, 11, 2, 6), b, True)])
    seq = "global_batch_size: 64\nseq_len: 4096\n"
    if fmt == "megatron":
        _write(L, run, {f"slurm-{a}.out": logs.megatron(A), f"slurm-{b}.out": logs.megatron(B)}, "seq_len: 4096\n")
    elif fmt == "torchtitan":
        _write(L, run, {"a.log": logs.torchtitan(A), "b.log": logs.torchtitan(B)},
               f"job_ids: {{a.log: '{a}', b.log: '{b}'}}\n")
    elif fmt == "nanogpt":
        _write(L, run + "-a", {"train.txt": logs.nanogpt(A)},
               f"run_id: {run}\njob_id: '{a}'\n{seq}save_steps: 1000\nstart: 2026-11-02T00:10:00Z\n")
        _write(L, run + "-b", {"train.txt": logs.nanogpt(B)},
               f"run_id: {run}\njob_id: '{b}'\n{seq}save_steps: 1000\nresume_step: 1000\nstart: 2026-11-02T03:40:00Z\n")
    elif fmt == "hf_trainer_state":
        _write(L, run + "-a", {"trainer_state.json": logs.hf_trainer_state(A, runtime=False, save_steps=1000)},
               f"run_id: {run}\njob_id: '{a}'\n{seq}start: 2026-11-02T00:10:00Z\nend: 2026-11-02T02:50:00Z\n")
        _write(L, run + "-b", {"trainer_state.json": logs.hf_trainer_state(
            B, earlier=list(range(100, 1001, 100)), save_steps=1000)},
            f"run_id: {run}\njob_id: '{b}'\n{seq}resume_step: 1000\nstart: 2026-11-02T03:40:00Z\n")
    elif fmt == "lightning_csv":
        _write(L, run + "-a", {"metrics.csv": logs.lightning_csv(A, timestamps=True)},
               f"run_id: {run}\njob_id: '{a}'\n{seq}save_steps: 1000\n")
        _write(L, run + "-b", {"metrics.csv": logs.lightning_csv(B, timestamps=True)},
               f"run_id: {run}\njob_id: '{b}'\n{seq}save_steps: 1000\nresume_step: 1000\n")
    else:  # the same run as a training loop logs it in gpuledger's JSONL
        for job, t in ((a, A), (b, B)):
            if t.loaded:
                L.event(run, "checkpoint_loaded", utc(2026, 11, 2, 3, 40), job_id=job, step=t.first)
            L.event(run, "step", t.begins.replace(tzinfo=utc(2026, 1, 1).tzinfo), job_id=job, step=t.first, tokens=0)
            for s in t.printed:
                ts = t.at(s).replace(tzinfo=utc(2026, 1, 1).tzinfo)
                L.event(run, "step", ts, job_id=job, step=s, tokens=100 * TPS)
                if s in t.saves:
                    L.event(run, "checkpoint_saved", ts, job_id=job, step=s)


def _clean_run(L: Landing, host: str, job: str, folder: str, files: dict[str, str], run_yaml: str) -> None:
    L.node(host)
    L.node_hours(host, utc(2026, 11, 2), 24, D("36.00"))
    L.job("c1", job, account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T04:00:00", state="COMPLETED", host=host)
    L.telemetry(host, [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 4), job, True)])
    _write(L, folder, files, run_yaml)


CLEAN = logs.Training(_naive(utc(2026, 11, 2)), 0, 2400)   # 00:00–04:00, the whole of its job


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("trainer-logs"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "clusters": {"c1": {"timezone": "UTC"}}}
    for i, fmt in enumerate(FORMATS, start=1):
        _resumed_run(L, fmt, i)
    meg = logs.Training(CLEAN.begins, 0, 2400, tflops=_megatron_tflops(CLEAN))
    _clean_run(L, "m1", "901", "r-mfu-megatron", {"slurm-901.out": logs.megatron(meg)}, "seq_len: 4096\n" + _model(N_MEGATRON))
    titan = logs.Training(CLEAN.begins, 0, 2400, mfu=_titan_mfu(CLEAN))
    _clean_run(L, "m2", "902", "r-mfu-torchtitan", {"a.log": logs.torchtitan(titan)}, "job_id: '902'\n" + _model(N_TITAN))
    _clean_run(L, "m3", "903", "r-wrong-heads", {"slurm-903.out": logs.megatron(meg)},
               "seq_len: 4096\n" + _model(N_MEGATRON, heads=64))
    with ledger_of(L, [NOV2]) as con:
        yield L, con


@pytest.fixture(scope="module")
def ledger(world):
    return world[1]


def test_every_format_staged_without_a_quarantined_line(ledger):
    assert ledger.execute("SELECT count(*) FROM ops.quarantine WHERE source = 'trainer_logs'").fetchall() == [(0,)]
    formats = dict(ledger.execute("SELECT run_id, any_value(log_format) FROM staging.stg_runs__events "
                                  "WHERE log_format IS NOT NULL GROUP BY run_id").fetchall())
    assert {formats[f"r-{f}"] for f in FORMATS[:-1]} == set(FORMATS[:-1])


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_resumed_run_loses_what_the_script_says(ledger, fmt):
    rows = dict_rows(ledger, "SELECT sum(lost_gpu_seconds) AS lost, sum(restart_gpu_seconds) AS restart "
                             "FROM marts.fct_rerun_loss WHERE run_id = ?", [f"r-{fmt}"])
    assert (rows[0]["lost"], rows[0]["restart"]) == (pytest.approx(LOST_S, abs=GPUS * 60),
                                                     pytest.approx(RESTART_S, abs=GPUS * 60))


@pytest.mark.parametrize("fmt", FORMATS[:-1])
def test_a_logs_run_counts_the_tokens_the_jsonl_run_does(ledger, fmt):
    q = "SELECT sum(tokens), sum(tokens_kept) FROM marts.fct_run_efficiency_daily WHERE run_id = ?"
    assert ledger.execute(q, [f"r-{fmt}"]).fetchall() == ledger.execute(q, ["r-jsonl"]).fetchall() == [
        (3000 * TPS, 2400 * TPS)]
    rerun = ("SELECT interrupted_at, last_checkpoint_at, lost_gpu_seconds, restart_gpu_seconds "
             "FROM marts.fct_rerun_loss WHERE run_id = ? ORDER BY ALL")
    assert ledger.execute(rerun, [f"r-{fmt}"]).fetchall() == ledger.execute(rerun, ["r-jsonl"]).fetchall()


@pytest.mark.parametrize("run", ["r-mfu-megatron", "r-mfu-torchtitan"])
def test_mfu_agrees_with_the_logs_own_figure(ledger, run):
    (mfu, reported, ratio), = ledger.execute(
        "SELECT mfu, reported_mfu, mfu_vs_reported FROM marts.fct_run_efficiency_daily WHERE run_id = ?", [run]).fetchall()
    assert reported == pytest.approx(_titan_mfu(CLEAN) if "titan" in run else _megatron_tflops(CLEAN) * 1e12 / PEAK_H100_BF16,
                                     rel=1e-3)
    assert ratio == pytest.approx(1, abs=0.02), (mfu, reported)


def test_a_wrong_heads_in_run_yaml_shows_as_a_ratio_far_from_one(ledger):
    (ratio,), = ledger.execute("SELECT mfu_vs_reported FROM marts.fct_run_efficiency_daily "
                               "WHERE run_id = 'r-wrong-heads'").fetchall()
    assert ratio > 1.1


def test_inspect_names_the_format_of_every_log(world):
    L, _ = world
    run = subprocess.run([sys.executable, "-m", "pipelines.cli", "inspect", "--json", "--landing", str(L.landing),
                          "--config", str(L.config_path)], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    entry = json.loads(run.stdout)["trainer_logs"]
    assert (entry["files"], entry["quarantined"]) == (13, 0)
    assert entry["rows"] > 0
    assert set(entry["formats"].values()) == set(FORMATS[:-1])
    assert entry["formats"]["runs/logs/r-megatron/slurm-101.out"] == "megatron"
