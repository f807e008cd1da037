"""Run plans: plans/<run_id>.yaml for the biggest runs, written from the simulator's own run parameters
(docs/ingest/plans.md), as a team would write them before launch: the model's shape, the tokens the run
is set to train on, its GPUs, a target MFU and a redundancy factor. Price, checkpoint, restart and MTBF
are left out (null), so the pipeline fills them from what the fleet did. The simulated runs reach an
MFU of 0.30–0.55 against the plans' 0.40, so some run over their budgets and some under.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from .fleet import CLUSTER_BY_NAME
from .runs import Run

PLANNED_RUNS = 3          # the biggest runs by planned GPU-hours get a plan
MFU_TARGET = 0.40
REDUNDANCY = 1.2


def planned_gpu_seconds(run: Run) -> float:
    return run.n_gpus * run.total_steps * run.step_time


def plan_yaml(run: Run) -> str:
    m = run.model
    start = dt.datetime.fromtimestamp(min(j.start for j in run.jobs), dt.timezone.utc).date()
    return f"""\
# Run plan for {run.run_id} (written by the simulator from the run's own parameters).
run_id: {run.run_id}
project: {run.project}
model: {{params: {m['params']}, active_params: {m['active_params']}, layers: {m['layers']}, heads: {m['heads']}, head_dim: {m['head_dim']}, seq_len: {m['seq_len']}}}
tokens: {run.total_steps * run.tokens_per_step}
gpu_model: {CLUSTER_BY_NAME[run.cluster].gpu_model}
gpus: {run.n_gpus}
dtype: bf16
mfu_target: {MFU_TARGET}
redundancy: {REDUNDANCY}           # the engineering redundancy factor
price_per_gpu_hour: null  # the fleet's effective cost per GPU-hour of the model, last 30 days
checkpoint_seconds: null  # the project's observed checkpoint save time
restart_seconds: null     # the observed median restart
mtbf_gpu_hours: null      # observed GPU-hours per interruption, last 30 days
start: {start.isoformat()}
"""


def write_plans(root: Path, runs: list[Run]) -> dict:
    started = [r for r in runs if r.jobs]
    biggest = sorted(started, key=lambda r: (-planned_gpu_seconds(r), r.run_id))[:PLANNED_RUNS]
    if biggest:
        root.mkdir(parents=True, exist_ok=True)
    for run in biggest:
        (root / f"{run.run_id}.yaml").write_text(plan_yaml(run), encoding="utf-8")
    return {"files": len(biggest), "rows": len(biggest), "runs": sorted(r.run_id for r in biggest)}
