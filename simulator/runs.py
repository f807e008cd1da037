"""Multi-node training runs: chains of Slurm jobs that checkpoint, get interrupted, and resume. (About
400 lines, one module, as workload.py is: the order of its random draws is what a seed's runs are.)

Each cluster sets aside about half its nodes as run slots (groups of 2–4 whole nodes, reserved pool first).
A slot hosts one run after another; each run is a chain of jobs on the slot's nodes:

    startup (zero util, < 10 min) -> steps -> checkpoint save every 30–60 min -> ... -> final save, teardown

(one run saves every 4–6 hours instead: RARE_CKPT_S below)

Interruptions are Poisson per GPU-day, but the hazard only starts after the job's first completed checkpoint
save (so every interruption has a checkpoint in its own job to roll back to, and the lost window never spans
two jobs), and an interruption is dropped unless its resuming job logs checkpoint_loaded before the window
ends (else no observer could tell it was resumed). The resuming job is submitted 20–180 s after the failure,
starts 5–30 min after it, loads the checkpoint (< 10 min of zero utilisation), and re-does the lost steps.
Start/End never fall in a repeated DST hour (see jobs.ambiguous_windows).

A share of the runs (Knobs.badput_run_share) log their badput as Megatron-LM or torchtitan can: a
`checkpoint_started` event where each blocking save begins, an evaluation after every few saves
(`eval_started` … `eval_done`, busy GPUs, the steps wait for it), and step timers (`data_seconds`,
`comm_seconds`: a share of the time since the job's previous step event). Which runs, and their shares, are
drawn from a stream of their own, so the other runs' random draws are as before. `marks` keeps the
intervals the truth of the badput is painted from (truth.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fleet import CLUSTER_BY_NAME, GPU_SPECS, MODELS, PROJECT_TEAM, RUN_PROJECTS, USERS, Fleet, flops_per_token
from .jobs import (EVAL, IDLE, SAVE, STARTUP, TEARDOWN, TRAIN, Job, align_up, ambiguous_windows, clear_of, clip_phases,
                   in_windows)

NEVER = 1 << 62
# A degraded node (a throttling GPU, a flaky link) slows the steps of the run on the first east slot by this
# factor for SLOW_S, from the first step after SLOW_AT of the window once its job has trained SLOW_AFTER_S
# (so the run has a baseline to be slower than). truth/incidents.csv records the stretch.
SLOW_FACTOR = 1.5
SLOW_S = 4 * 3600
SLOW_AT = 0.35
SLOW_AFTER_S = 3 * 3600
# One run checkpoints too rarely for how often it is interrupted: the first run of west's last slot (so
# only fleets with run slots on west have it, 8 nodes or more, and every run drawn before it is as it was)
# saves every RARE_CKPT_S (drawn from a stream of its own), is interrupted RARE_HAZARD times as often as
# the others (flaky nodes) and logs its badput (checkpoint_started: the ledger needs the save's length):
# its interval is far above the Young–Daly optimum sqrt(2 × save × MTBF), a checkpoint_interval saving.
RARE_CKPT_S = (4 * 3600, 6 * 3600)
RARE_HAZARD = 3.0


@dataclass
class Event:
    ts: int
    event: str              # run_config, step, checkpoint_started, checkpoint_saved, checkpoint_loaded,
                            # eval_started, eval_done
    job: Job
    step: int | None = None
    tokens: int | None = None
    kept: bool = True       # step events only: False once rolled back by an interruption
    data_seconds: float | None = None   # step events of runs that log their badput: the trainer's timers
    comm_seconds: float | None = None


@dataclass
class Run:
    run_id: str
    project: str
    cluster: str
    model: dict
    n_gpus: int
    mfu: float
    tokens_per_step: int
    step_time: float
    steps_per_event: int
    ckpt_interval: int
    total_steps: int
    jobs: list[Job] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    # (start, end, job) windows for truth/runs.csv
    lost_windows: list[tuple[int, int, Job]] = field(default_factory=list)
    restart_windows: list[tuple[int, int, Job]] = field(default_factory=list)
    # badput logging (module docstring): off for most runs
    logs_badput: bool = False
    data_share: float = 0.0
    comm_share: float = 0.0
    eval_every: int = 0             # an evaluation after every eval_every-th save
    eval_s: int = 0
    badput_rng: np.random.Generator | None = None
    rare_checkpoints: bool = False  # the run checkpointing too rarely (RARE_CKPT_S)
    # (start, end, kind, job): startup of each job that is no restart, and the logged saves and evaluations
    marks: list[tuple[int, int, str, Job]] = field(default_factory=list)


def _slot_sizes(n_cluster: int, cluster: str, rng: np.random.Generator) -> list[int]:
    if n_cluster >= 4:
        budget = n_cluster // 2
    elif n_cluster >= 2 and cluster == "east":
        budget = 2      # tiny fleets: only east trains, west keeps its nodes for the other jobs
    else:
        budget = 0
    sizes = []
    while budget >= 2:
        m = min(int(rng.integers(2, 5)), budget)
        if budget - m == 1:
            m = m + 1 if m < 4 else m - 1
        sizes.append(m)
        budget -= m
    return sizes


def _batch(model: dict, tok_s: float) -> tuple[int, float]:
    """Largest power-of-two global batch whose step takes at most 60 s (hence 30–60 s steps)."""
    seq = model["seq_len"]
    k = 0
    while seq * 2 ** (k + 1) / tok_s <= 60.0:
        k += 1
    tokens = seq * 2 ** k
    return tokens, tokens / tok_s


class RunBuilder:
    def __init__(self, fleet: Fleet, t0: int, t1: int, seed: int, interrupt_rate: float, stall_rate: float,
                 new_job, badput_share: float = 0.0):
        self.fleet, self.t0, self.t1, self.seed = fleet, t0, t1, seed
        self.badput_share = badput_share
        self.rate, self.stall_rate = interrupt_rate, stall_rate
        self.new_job = new_job
        self.runs: list[Run] = []
        self.run_nodes: list[int] = []
        self._counter: dict[str, int] = {}
        self.amb = {c: ambiguous_windows(CLUSTER_BY_NAME[c].timezone, t0, t1) for c in ("east", "west")}
        self.slow_slot: tuple[int, ...] | None = None
        self.slow_window: tuple[float, float] | None = None
        # run_id -> [run, when its steps began to slow, its last slowed step event]
        self.slowdowns: dict[str, list] = {}

    def build(self) -> list[Run]:
        for ci, cluster in enumerate(("east", "west")):
            nodes = self.fleet.cluster_nodes(cluster)
            rng = np.random.default_rng([self.seed, 101, ci])
            first = 0
            sizes = _slot_sizes(len(nodes), cluster, rng)
            for si, size in enumerate(sizes):
                slot = tuple(n.index for n in nodes[first:first + size])
                first += size
                if cluster == "east" and si == 0:
                    self.slow_slot = slot
                self.run_nodes.extend(slot)
                projects = RUN_PROJECTS[cluster]
                t = self.t0 + int(rng.uniform(300, 3 * 3600))
                j = 0
                while t < self.t1 - 3600:
                    project = projects[(si + j) % len(projects)]
                    run = self._new_run(project, cluster, len(slot) * 8, rng,
                                        rare=cluster == "west" and si == len(sizes) - 1 and j == 0)
                    end = self._chain(run, slot, t, rng)
                    self.runs.append(run)
                    j += 1
                    if end is None:
                        break
                    t = end + int(rng.uniform(3600, 6 * 3600))
        return self.runs

    def _new_run(self, project: str, cluster: str, n_gpus: int, rng: np.random.Generator, rare: bool = False
                 ) -> Run:
        self._counter[project] = self._counter.get(project, 0) + 1
        model = MODELS[project]
        mfu = float(rng.uniform(0.30, 0.55))
        peak = GPU_SPECS[CLUSTER_BY_NAME[cluster].gpu_model]["peak_bf16"]
        tok_s = mfu * peak * n_gpus / flops_per_token(model)
        tokens_per_step, step_time = _batch(model, tok_s)
        planned = float(rng.uniform(1.5, 4.0)) * 86400
        run = Run(
            run_id=f"run-{project.replace('-', '')}-{self._counter[project]:02d}", project=project,
            cluster=cluster, model=model, n_gpus=n_gpus, mfu=mfu, tokens_per_step=tokens_per_step,
            step_time=step_time, steps_per_event=max(1, round(60.0 / step_time)),
            ckpt_interval=int(rng.uniform(30, 60)) * 60, total_steps=int(planned / step_time))
        # its own stream (seed, purpose, the run's number), so the draws above stay as they were
        brng = np.random.default_rng([self.seed, 313, len(self.runs)])
        if rare:
            run.rare_checkpoints = True
            run.ckpt_interval = int(np.random.default_rng([self.seed, 131]).uniform(*RARE_CKPT_S)) // 60 * 60
        if brng.random() < self.badput_share or rare:
            run.logs_badput, run.badput_rng = True, brng
            run.data_share, run.comm_share = float(brng.uniform(0.02, 0.08)), float(brng.uniform(0.02, 0.06))
            run.eval_every, run.eval_s = int(brng.integers(2, 5)), int(brng.integers(6, 21)) * 30
        return run

    def _timers(self, run: Run, interval: int | None) -> tuple[float | None, float | None]:
        """A logged step's data wait and exposed communication: the run's shares of the time since the job's
        previous step event, give or take half; none for a job's first step (nothing to time it from)."""
        if not run.logs_badput or interval is None:
            return None, None
        u, v = run.badput_rng.uniform(0.5, 1.5, 2)
        return round(interval * run.data_share * u, 3), round(interval * run.comm_share * v, 3)

    def _chain(self, run: Run, slot: tuple[int, ...], t_start: int, rng: np.random.Generator) -> int | None:
        """Simulate the run's jobs from t_start; return the run's end, or None if still running at t1."""
        t1 = self.t1
        team = PROJECT_TEAM[run.project]
        user, uid = USERS[team][int(rng.integers(0, len(USERS[team])))]
        amb = self.amb[run.cluster]
        step = 0
        t = clear_of(t_start, amb)
        if t >= t1:
            return None
        submit = max(self.t0, t - int(rng.uniform(60, 1200)))
        if in_windows(submit, amb):
            submit = max(self.t0, min(a for a, b in amb if a <= submit < b) - 60)
        resume = False
        while True:
            job = self.new_job(kind="run", cluster=run.cluster, name=f"{run.project}-train", user=user, uid=uid,
                               project=run.project, partition="train", qos="high", n_nodes=len(slot),
                               gpus_per_node=8, submit=submit)
            job.start, job.nodes, job.gpus = t, slot, tuple(range(8))
            job.run_id, job.mfu = run.run_id, run.mfu
            job.fb_mib = float(rng.uniform(62000, 78000))
            run.jobs.append(job)
            out = self._job(run, job, step, resume, rng)
            if out is None:
                return job.end if job.end is not None else None
            t_fail, saved_step, saved_ts, delay = out
            # roll back: steps after the last completed save of this job are lost
            for ev in reversed(run.events):
                if ev.job is not job:
                    break
                if ev.event == "step" and ev.step > saved_step:
                    ev.kept = False
            run.lost_windows.append((saved_ts, t_fail, job))
            job.rerun_windows.append((saved_ts, t_fail))
            job.resumed = True
            step, resume = saved_step, True
            submit = t_fail + int(rng.uniform(20, 180))
            if in_windows(submit, amb):
                submit = t_fail
            t = clear_of(t_fail + delay, amb)

    def _slowdown(self, job: Job, clock: float, first_step_ts: int | None) -> float:
        """The factor the degraded node puts on the step starting at `clock` (1 elsewhere and at other times)."""
        if job.nodes != self.slow_slot:
            return 1.0
        if self.slow_window is None:
            if (clock >= self.t0 + SLOW_AT * (self.t1 - self.t0) and first_step_ts is not None
                    and clock - first_step_ts >= SLOW_AFTER_S):
                self.slow_window = (clock, clock + SLOW_S)
            else:
                return 1.0
        a, b = self.slow_window
        return SLOW_FACTOR if a <= clock < b else 1.0

    def _job(self, run: Run, job: Job, step: int, resume: bool, rng: np.random.Generator):
        """Simulate one job of the run. Returns (t_fail, saved_step, saved_ts, restart_delay) if it was
        interrupted, else None (completed, or still running at the end of the window)."""
        t1 = self.t1
        amb = self.amb[run.cluster]
        t = job.start
        ph = job.phases
        su = align_up(t + rng.uniform(120, 480))
        ph.append((t, su, STARTUP))
        if resume:
            run.events.append(Event(su, "checkpoint_loaded", job, step))
        else:
            run.events.append(Event(t + int(rng.integers(5, 30)), "run_config", job))
        lam = self.rate * run.n_gpus / 86400.0 * (RARE_HAZARD if run.rare_checkpoints else 1.0)
        ttf = int(rng.exponential(1.0 / lam)) if lam > 0 else NEVER
        delay = int(rng.uniform(300, 1800))
        slam = self.stall_rate / 86400.0
        stall_at = su + int(rng.exponential(1.0 / slam)) if slam > 0 else NEVER
        stall_len = int(rng.integers(24, 51)) * 30          # 12–25 min
        t_fail = NEVER
        saved_step, saved_ts = step, None
        anchor = train_from = su
        clock = su + float(rng.uniform(30, 120))             # warm-up before the first logged step
        first_step_ts = last_step_ts = None
        failed = False
        saves = 0

        def finish_running(kind_from: int, kind: int):
            if t1 > kind_from:
                ph.append((kind_from, t1, kind))
            job.end, job.state = None, "RUNNING"

        while True:
            n = min(run.steps_per_event, run.total_steps - step)
            factor = self._slowdown(job, clock, first_step_ts)
            ev_clock = clock + n * run.step_time * factor
            ev_t = int(round(ev_clock))
            if t_fail <= ev_t:
                if t_fail > train_from:
                    ph.append((train_from, t_fail, TRAIN))
                failed = True
                break
            if ev_t >= t1:
                finish_running(train_from, TRAIN)
                break
            step += n
            data_s, comm_s = self._timers(run, None if first_step_ts is None else ev_t - last_step_ts)
            run.events.append(Event(ev_t, "step", job, step, n * run.tokens_per_step,
                                    data_seconds=data_s, comm_seconds=comm_s))
            last_step_ts = ev_t
            if factor > 1:
                self.slowdowns.setdefault(run.run_id, [run, int(clock), ev_t])[2] = ev_t
            if first_step_ts is None:
                first_step_ts = ev_t
                if not resume:      # a restart's start-up is rerun_loss already
                    run.marks.append((job.start, ev_t, "startup", job))
            now = ev_t
            clock = ev_clock
            if ev_t - anchor >= run.ckpt_interval or step >= run.total_steps:
                save_end = ev_t + int(rng.integers(60, 181))
                if run.logs_badput:
                    run.events.append(Event(ev_t, "checkpoint_started", job, step))
                ph.append((train_from, ev_t, TRAIN))
                if t_fail < save_end:
                    ph.append((ev_t, t_fail, SAVE))
                    failed = True
                    break
                if save_end >= t1:
                    finish_running(ev_t, SAVE)
                    break
                ph.append((ev_t, save_end, SAVE))
                run.events.append(Event(save_end, "checkpoint_saved", job, step))
                if run.logs_badput:
                    run.marks.append((ev_t, save_end, "checkpoint_save", job))
                    saves += 1
                if saved_ts is None:
                    tf = clear_of(save_end + ttf, amb)
                    # only if the resuming job logs checkpoint_loaded inside the window (startup < 600 s):
                    # otherwise nobody could yet tell the interrupted job was resumed
                    if clear_of(tf + delay, amb) + 600 < t1:
                        t_fail = tf
                saved_step, saved_ts = step, save_end
                anchor = train_from = now = save_end
                clock = float(save_end)
                if step >= run.total_steps:
                    end = save_end + int(rng.integers(30, 121))
                    down = save_end
                    if in_windows(end, amb):
                        # keep End out of the repeated DST hour: a slow exit, long enough to count as idle,
                        # so it starts on the sample grid like every other idle stretch
                        end = clear_of(end, amb, after=int(rng.integers(30, 121)))
                        down = align_up(save_end)
                        ph[-1] = (ph[-1][0], down, SAVE)
                    if end >= t1:
                        finish_running(down, TEARDOWN)
                    else:
                        ph.append((down, end, TEARDOWN))
                        job.end, job.state, job.exit_code = end, "COMPLETED", "0:0"
                    break
                if run.logs_badput and saves % run.eval_every == 0:
                    # an evaluation after the save: busy GPUs, no steps until it is done
                    eval_end = save_end + run.eval_s
                    run.events.append(Event(save_end, "eval_started", job, step))
                    if t_fail < eval_end:
                        ph.append((save_end, t_fail, EVAL))
                        failed = True
                        break
                    if eval_end >= t1:
                        finish_running(save_end, EVAL)
                        break
                    ph.append((save_end, eval_end, EVAL))
                    run.events.append(Event(eval_end, "eval_done", job, step))
                    run.marks.append((save_end, eval_end, "evaluation", job))
                    anchor = train_from = now = eval_end
                    clock = float(eval_end)
            if now >= stall_at:
                # a data-loader stall right after this step: no steps, zero utilisation
                a = align_up(now)
                b = a + stall_len
                stall_at = NEVER
                if t_fail <= a:         # t_fail >= now here
                    if t_fail > train_from:
                        ph.append((train_from, t_fail, TRAIN))
                    failed = True
                    break
                if a > train_from:
                    ph.append((train_from, a, TRAIN))
                if t_fail < b:
                    ph.append((a, t_fail, IDLE))
                    failed = True
                    break
                if b >= t1:
                    finish_running(a, IDLE)
                    break
                ph.append((a, b, IDLE))
                train_from = b
                clock = float(b)
        if job.end is None:
            job.phases[:] = clip_phases(ph, job.start, t1)     # e.g. a startup still under way at t1
        if resume:
            end = first_step_ts if first_step_ts is not None else t1
            run.restart_windows.append((job.start, end, job))
            job.rerun_windows.append((job.start, end))
        if not failed:
            return None
        job.end = t_fail
        if rng.random() < 0.65:
            job.state, job.exit_code = "NODE_FAIL", "0:0"
        else:
            job.state, job.exit_code = "FAILED", "1:0"
        return t_fail, saved_step, saved_ts, delay
