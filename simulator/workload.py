"""Everything that runs on the fleet: training runs (runs.py), a stream of single-node jobs, a handful of
guaranteed "feature" jobs (hung, idle notebook, requeued, array, OOM, failed, cancelled, pending), a drained
node and telemetry outages; then Slurm ids.

Scheduling of the non-run jobs is a simple per-GPU "free at" list in submit order: a job starts at the earliest
time some node has enough GPUs free (lowest GPU indices, lowest node on ties); nothing backfills behind a later
reservation, which is fine for a witness. Consecutive jobs on a GPU are at least 60 s apart (prolog/epilog),
so a sample always falls between them.

The nodes no bill covers (offbill.py) get the same single-node stream after all of that, from random streams
of their own, so the billed fleet's jobs are the same for a seed with or without them.

Why one module of about 500 lines: `WorkloadBuilder` draws from its random streams in one fixed order,
which every seed's fleet (and the tests' truth for it) depends on; its steps are kept in that order, in
one place, so a change that reorders a draw is seen as one.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from .fleet import CLUSTER_BY_NAME, PROJECT_TEAM, USERS, Fleet, Node, hexdigest
from .jobs import (EVAL, IDLE, LIGHT, SAMPLE_S, SAVE, STARTUP, TRAIN, Job, align_up, ambiguous_windows,
                   check_no_overlap, check_phases, clip_phases, in_windows, lay_phases)
from .offbill import OFF_BILL
from .runs import Run, RunBuilder


@dataclass(frozen=True)
class Knobs:
    """Rates behind the workload. Defaults give a 7-day, 16-node demo with every feature several times;
    tests raise some of them to force features into short simulations."""
    # Unexpected interruptions per GPU-day. The reference puts real fleets at ~5e-4–1.8e-3; this is ~15–50x
    # that so each 2–4-node run is interrupted a few times a week.
    interrupt_rate_per_gpu_day: float = 0.03
    # Data-loader stalls (>= 12 min at zero utilisation, so allocated_idle) per run-job-day.
    stall_rate_per_job_day: float = 0.12
    # Offered load of the single-node job stream, as a share of the GPUs not used by runs.
    stream_load: float = 0.6
    hung_jobs: int | None = None          # default: ~1 per week per 16 nodes, at least 1
    outages: int | None = None            # default: ~2 per week per 16 nodes, at least 1
    short_gaps_per_node_day: float = 1.5  # dropped scrapes of 1–2 samples (not outages)
    mig_node: bool = False                # add east-mig-001, its GPUs split into MIG instances (simulator/mig.py)
    # Share of training runs whose trainers log their badput: checkpoint_started, evaluations and step timers
    # (simulator/runs.py). Modest by default, so the demo shows every badput kind without its other figures
    # moving much; 0 gives the runs of before.
    badput_run_share: float = 0.5
    # Checkpoints, logs and datasets in a Lustre file system per project and two buckets, inventoried daily,
    # with the checkpoint bucket's bill line (simulator/storage.py); False gives the bills of before.
    storage: bool = True


@dataclass
class Workload:
    jobs: list[Job]
    runs: list[Run]
    outages: dict[int, list[tuple[int, int]]]           # node index -> [start, end) without samples
    drain: tuple[int, int, int] | None                  # (node index, start, end)
    run_nodes: tuple[int, ...] = field(default_factory=tuple)
    # runs a degraded node slowed (runs.py): (run_id, cluster, slowed from, last slowed step, its nodes)
    slowdowns: list[tuple[str, str, int, int, tuple[int, ...]]] = field(default_factory=list)
    # jobs on the nodes no bill covers (offbill.py), apart from `jobs` so the billed fleet's figures stay
    # as they were
    off_bill_jobs: list[Job] = field(default_factory=list)


STREAM_KINDS = ("eval", "debug", "train", "interactive", "partial")
STREAM_WEIGHTS = (0.30, 0.25, 0.15, 0.15, 0.15)
NAMES = {
    "eval": ("eval-mmlu", "eval-gsm8k", "eval-humaneval", "rm-score", "eval-longbench"),
    "debug": ("debug-dataloader", "repro-nan", "test-fsdp", "profile-attn"),
    "train": ("sft-8b-lora", "distill-3b", "ppo-rollout", "dpo-8b"),
    "interactive": ("jupyter", "bash", "vscode-server"),
    "partial": ("sweep-lr", "sweep<lr=3e-4>&bs=64", "ablate-rope"),
}
PROJECTS_FOR = {
    "eval": ("eval-harness", "eval-harness", "rlhf", "distill", "llm-7b"),
    "debug": ("llm-70b", "llm-7b", "rlhf", "sft", "moe-exp", "long-context", "eval-harness", "distill"),
    "train": ("sft", "distill", "rlhf", "sft"),
    "interactive": ("moe-exp", "long-context", "rlhf", "distill"),
    "partial": ("moe-exp", "long-context", "sft", "eval-harness"),
}
PARTITION = {"eval": "batch", "debug": "debug", "train": "train", "interactive": "interactive",
             "partial": "batch", "hung": "train", "requeue": "train", "array": "batch", "pending": "train"}
QOS = {"debug": "debug", "array": "low"}


def _pick(rng: np.random.Generator, seq, p=None):
    return seq[int(rng.choice(len(seq), p=p))]


def _draw(kind: str, rng: np.random.Generator) -> dict:
    """A stream job's shape: GPUs, runtime, final state."""
    r = rng.random()
    if kind == "eval":
        gpus = _pick(rng, (1, 2, 4, 8), (0.3, 0.3, 0.2, 0.2))
        dur = int(rng.uniform(10, 90) * 60)
        state = "COMPLETED" if r < 0.85 else ("FAILED" if r < 0.95 else "CANCELLED")
    elif kind == "debug":
        gpus = _pick(rng, (1, 2, 4))
        state = ("COMPLETED" if r < 0.55 else "FAILED" if r < 0.8 else "OUT_OF_MEMORY" if r < 0.9
                 else "CANCELLED")
        dur = int(rng.uniform(5, 45) * 60) if state in ("COMPLETED", "CANCELLED") else int(rng.uniform(2, 20) * 60)
    elif kind == "train":
        gpus = 8
        dur = int(rng.uniform(2, 10) * 3600)
        state = "COMPLETED" if r < 0.8 else ("FAILED" if r < 0.9 else "CANCELLED")
    elif kind == "interactive":
        gpus = _pick(rng, (1, 2))
        if r < 0.3:
            dur, state = 8 * 3600, "TIMEOUT"         # sat until its time limit
        else:
            dur = int(rng.uniform(2, 8) * 3600)
            state = "COMPLETED" if r < 0.9 else "CANCELLED"
    else:   # partial: asks for 4 GPUs, uses one
        gpus = 4
        dur = int(rng.uniform(30, 120) * 60)
        state = "COMPLETED"
    return {"gpus": gpus, "duration": dur, "state": state}


def _mean_gpu_seconds() -> float:
    rng = np.random.default_rng(0)
    tot = 0.0
    n = 4000
    for _ in range(n):
        d = _draw(_pick(rng, STREAM_KINDS, STREAM_WEIGHTS), rng)
        tot += d["gpus"] * d["duration"]
    return tot / n


MAX_WAIT_S = 8 * 3600

EXIT = {"COMPLETED": "0:0", "FAILED": "1:0", "OUT_OF_MEMORY": "0:125", "TIMEOUT": "0:0", "CANCELLED": "0:0",
        "REQUEUED": "0:0", "NODE_FAIL": "0:0"}


class Scheduler:
    """Per-GPU free-at times for one cluster's non-run nodes."""

    def __init__(self, node_indices: list[int], t0: int, blocks: dict[int, tuple[int, int]],
                 ambiguous: list[tuple[int, int]]):
        self.nodes = node_indices
        self.ambiguous = ambiguous
        self.free = np.full((len(node_indices), 8), t0, dtype=np.int64)
        self.blocks = {node_indices.index(n): ab for n, ab in blocks.items() if n in node_indices}

    def place(self, submit: int, gpus: int, duration: int, gap: int) -> tuple[int, int, tuple[int, ...]]:
        kth = np.sort(self.free, axis=1)[:, gpus - 1]
        start = np.maximum(kth, submit)
        while True:
            before = start.copy()
            for i, (a, b) in self.blocks.items():
                if start[i] < b and start[i] + duration + gap > a:
                    start[i] = max(start[i], b)
            for a, b in self.ambiguous:
                # keep Start and End out of a repeated DST hour: start after it, or late enough to end after it
                end = start + duration
                for i in np.flatnonzero(((start >= a) & (start < b)) | ((end >= a) & (end < b))):
                    s2 = b + 60 - duration
                    start[i] = s2 if (s2 >= start[i] and not a <= s2 < b) else b + 60
            if np.array_equal(before, start):
                break
        i = int(np.argmin(start))
        s = int(start[i])
        chosen = tuple(int(g) for g in np.flatnonzero(self.free[i] <= s)[:gpus])
        self.free[i, list(chosen)] = s + duration + gap
        return s, self.nodes[i], chosen


class WorkloadBuilder:
    def __init__(self, fleet: Fleet, t0: int, t1: int, seed: int, knobs: Knobs):
        self.fleet, self.t0, self.t1, self.seed, self.knobs = fleet, t0, t1, seed, knobs
        self.jobs: list[Job] = []
        self.days = (t1 - t0) // 86400
        self.amb = {c: ambiguous_windows(CLUSTER_BY_NAME[c].timezone, t0, t1) for c in ("east", "west")}
        self.amb.update({c.name: ambiguous_windows(c.timezone, t0, t1) for c in OFF_BILL})
        self.next_key = 0   # job keys are never reused, even after dropped jobs leave `jobs`

    def new_job(self, **kw) -> Job:
        team = PROJECT_TEAM[kw["project"]]
        if "user" not in kw:
            raise ValueError("user required")
        job = Job(key=self.next_key, **kw)
        self.next_key += 1
        assert job.user in {u for u, _ in USERS[team]}
        self.jobs.append(job)
        return job

    def _user(self, project: str, rng: np.random.Generator) -> tuple[str, int]:
        users = USERS[PROJECT_TEAM[project]]
        return users[int(rng.integers(0, len(users)))]

    # ---------------------------------------------------------------- build
    def build(self, off_bill: list[Node] = ()) -> Workload:
        """The billed fleet's workload, then (`off_bill`) the jobs of the nodes no bill covers."""
        rb = RunBuilder(self.fleet, self.t0, self.t1, self.seed, self.knobs.interrupt_rate_per_gpu_day,
                        self.knobs.stall_rate_per_job_day, self.new_job, self.knobs.badput_run_share)
        runs = rb.build()
        run_nodes = set(rb.run_nodes)
        drain = self.drain = self._drain(run_nodes)
        blocks = {drain[0]: (drain[1], drain[2])} if drain else {}
        scheds = {}
        for c in ("east", "west"):
            free_nodes = [n.index for n in self.fleet.cluster_nodes(c) if n.index not in run_nodes]
            if free_nodes:
                scheds[c] = Scheduler(free_nodes, self.t0, blocks, self.amb[c])
        self._place_all(scheds)
        self.jobs = [j for j in self.jobs if j.state != "DROPPED"]
        outages = self._outages(runs)
        self._assign_ids()
        for j in self.jobs:
            check_phases(j, self.t1)
        check_no_overlap(self.jobs, self.t1)
        for j in self.jobs:
            assert not any(t is not None and in_windows(t, self.amb[j.cluster]) for t in (j.submit, j.start, j.end))
        slowdowns = [(run.run_id, run.cluster, a, b, rb.slow_slot) for run, a, b in rb.slowdowns.values()]
        billed = self.jobs
        off = self._off_bill(off_bill) if off_bill else []     # draws only from streams of its own
        return Workload(billed, runs, outages, drain, tuple(sorted(run_nodes)), slowdowns, off_bill_jobs=off)

    def _off_bill(self, nodes: list[Node]) -> list[Job]:
        """The off-bill clusters' jobs, drawn after the billed fleet's from streams of their own (so the
        billed fleet's jobs are the same with or without them): the same single-node job stream as a billed
        cluster's (kinds, shapes, phases, scheduler), plus a hung job and a failed one on each cluster so
        allocated_idle and failed_job surely appear. No runs, outages or drains. Keys go on from the billed
        fleet's (`next_key`); `jobs` holds the off-bill jobs from here on."""
        self.jobs = []
        scheds = {}
        for c in OFF_BILL:
            idx = [n.index for n in nodes if n.cluster == c.name]
            if idx:
                scheds[c.name] = Scheduler(idx, self.t0, {}, self.amb[c.name])
        subs: list[Job] = []
        window = self.t1 - self.t0
        mean = _mean_gpu_seconds()
        for ci, c in enumerate(OFF_BILL):
            if c.name not in scheds:
                continue
            rng = np.random.default_rng([self.seed, 212, ci])
            self._submit(subs, rng, "hung", c.name, c.projects[0], 4, 6 * 3600, "TIMEOUT",
                         self.t0 + rng.uniform(1800, 3 * 3600), name="ablation-" + c.name)
            self._submit(subs, rng, "debug", c.name, c.projects[-1], 2, rng.uniform(5, 15) * 60, "FAILED",
                         self.t0 + rng.uniform(1800, 6 * 3600), name="repro-nan")
            lam = self.knobs.stream_load * len(scheds[c.name].nodes) * 8 * window / mean
            for sub in np.sort(rng.uniform(self.t0, self.t1 - 3600, int(rng.poisson(lam)))):
                kind = _pick(rng, STREAM_KINDS, STREAM_WEIGHTS)
                d = _draw(kind, rng)
                self._submit(subs, rng, kind, c.name, _pick(rng, c.projects), d["gpus"], d["duration"],
                             d["state"], sub)
        self._place_all(scheds, subs)
        jobs = [j for j in self.jobs if j.state != "DROPPED"]
        self.jobs = jobs
        self._assign_ids({c.name: c.job_id_base for c in OFF_BILL})
        for j in jobs:
            check_phases(j, self.t1)
        check_no_overlap(jobs, self.t1)
        return jobs

    def _drain(self, run_nodes: set[int]) -> tuple[int, int, int] | None:
        day = min(1, self.days - 1)
        for c in ("west", "east"):
            cands = [n for n in self.fleet.cluster_nodes(c) if n.index not in run_nodes and not n.owner_team]
            if cands:
                a = self.t0 + day * 86400
                return cands[-1].index, a, a + 86400
        return None

    # ---------------------------------------------------------------- submissions
    def _submissions(self, scheds: dict) -> list[Job]:
        rng = np.random.default_rng([self.seed, 202])
        subs: list[Job] = []
        t0, t1 = self.t0, self.t1
        window = t1 - t0
        clusters = [c for c in ("east", "west") if c in scheds]
        if not clusters:
            return []

        def pick_cluster(pref: str) -> str:
            return pref if pref in scheds else clusters[0]

        def mk(*args, **kw):
            return self._submit(subs, rng, *args, **kw)

        # guaranteed features, early in the window while the queue is short
        n_hung = self.knobs.hung_jobs if self.knobs.hung_jobs is not None else \
            max(1, round(self.days / 7 * len(self.fleet.nodes) / 16))
        limit = 6 * 3600
        for i in range(n_hung):
            c = pick_cluster(("east", "west")[i % 2])
            sub = t0 + window * i / n_hung + rng.uniform(1800, 3 * 3600)
            sub = min(sub, t1 - limit - 4 * 3600)
            mk("hung", c, "llm-7b" if c == "east" else "long-context", 4, limit, "TIMEOUT", sub,
               name="ablation-ctx" if c == "west" else "ablation-7b")
        mk("interactive", pick_cluster("west"), "moe-exp", 1, rng.uniform(3, 5) * 3600, "COMPLETED",
           t0 + rng.uniform(3600, 3 * 3600), name="jupyter")
        first = mk("requeue", pick_cluster("east"), "sft", 8, rng.uniform(1800, 5400), "REQUEUED",
                   t0 + rng.uniform(1800, 4 * 3600), name="sft-8b-full")
        first.recipe["second_duration"] = int(rng.uniform(3600, 3 * 3600))
        arr_sub = t0 + rng.uniform(3600, 5 * 3600)
        arr_c = pick_cluster("west")
        who = self._user("eval-harness", rng)
        for task in range(1, 5):
            j = mk("array", arr_c, "eval-harness", 1, rng.uniform(20, 60) * 60,
                   "FAILED" if task == 3 else "COMPLETED", arr_sub, name="eval-sweep", who=who)
            j.array = (0, task)
        mk("debug", pick_cluster("east"), "llm-70b", 2, rng.uniform(4, 15) * 60, "OUT_OF_MEMORY",
           t0 + rng.uniform(1800, 6 * 3600), name="test-fsdp")
        mk("debug", pick_cluster("west"), "moe-exp", 1, rng.uniform(3, 12) * 60, "FAILED",
           t0 + rng.uniform(1800, 6 * 3600), name="repro-nan")
        mk("eval", pick_cluster("east"), "eval-harness", 2, rng.uniform(20, 60) * 60, "CANCELLED",
           t0 + rng.uniform(1800, 6 * 3600), name="eval-mmlu")

        # the stream
        mean = _mean_gpu_seconds()
        for c in clusters:
            free_gpus = len(scheds[c].nodes) * 8
            lam = self.knobs.stream_load * free_gpus * window / mean
            n = int(rng.poisson(lam))
            for sub in np.sort(rng.uniform(t0, t1 - 3600, n)):
                if self.drain and self.fleet.nodes[self.drain[0]].cluster == c and \
                        self.drain[1] <= sub < self.drain[2] and rng.random() < 1 / len(scheds[c].nodes):
                    continue    # fewer submissions while a node is drained (thinning keeps the load even)
                kind = _pick(rng, STREAM_KINDS, STREAM_WEIGHTS)
                d = _draw(kind, rng)
                mk(kind, c, _pick(rng, PROJECTS_FOR[kind]), d["gpus"], d["duration"], d["state"], sub)
        # one job still waiting for nodes when the window ends
        pc = "east"
        user, uid = self._user("llm-70b", rng)
        pend = self.new_job(kind="pending", cluster=pc, name="llm-70b-scaling", user=user, uid=uid,
                            project="llm-70b", partition="train", qos="high", n_nodes=4, gpus_per_node=8,
                            submit=int(t1 - rng.uniform(3600, 3 * 3600)))
        pend.state = "PENDING"
        return subs

    def _submit(self, subs: list[Job], rng: np.random.Generator, kind, cluster, project, gpus, duration, state,
                submit, name=None, who=None, **extra) -> Job:
        """A single-node job submitted to `cluster`, to be placed by its scheduler (`recipe` says how it ends)."""
        user, uid = who or self._user(project, rng)
        if in_windows(int(submit), self.amb[cluster]):
            submit = min(a for a, b in self.amb[cluster] if a <= submit < b) - rng.uniform(60, 600)
        job = self.new_job(kind=kind, cluster=cluster, name=name or _pick(rng, NAMES.get(kind, (kind,))),
                           user=user, uid=uid, project=project, partition=PARTITION[kind],
                           qos=QOS.get(kind, "normal"), n_nodes=1, gpus_per_node=gpus, submit=int(submit),
                           duration=int(duration))
        job.recipe = {"state": state, **extra}
        subs.append(job)
        return job

    # ---------------------------------------------------------------- placement
    def _place_all(self, scheds: dict, subs: list[Job] | None = None) -> None:
        if subs is None:
            subs = self._submissions(scheds)
        heap = [(j.submit, j.key, j) for j in subs]
        heapq.heapify(heap)
        while heap:
            _, _, job = heapq.heappop(heap)
            rng = np.random.default_rng([self.seed, 303, job.key])
            gap = int(rng.integers(60, 301))
            start, node, gpus = scheds[job.cluster].place(job.submit, job.gpus_per_node, job.duration, gap)
            if start >= self.t1 or (start - job.submit > MAX_WAIT_S and job.kind in STREAM_KINDS):
                if start < self.t1 or self.t1 - job.submit > MAX_WAIT_S:
                    # the user would have given up long ago: treat the job as never submitted
                    job.state = "DROPPED"
                    continue
                job.state = "PENDING"
                continue
            job.start, job.nodes, job.gpus = start, (node,), gpus
            end = start + job.duration
            final = job.recipe["state"]
            if end > self.t1:
                job.end, job.state = None, "RUNNING"
            else:
                job.end, job.exit_code = end, EXIT[final]
                if final == "CANCELLED":
                    job.cancel_uid = job.uid
                    job.state = f"CANCELLED by {job.uid}"
                else:
                    job.state = final
            job.phases = self._phases(job, rng)
            if job.kind == "requeue" and final == "REQUEUED" and job.end is not None:
                second = self.new_job(kind="requeue", cluster=job.cluster, name=job.name, user=job.user,
                                      uid=job.uid, project=job.project, partition=job.partition, qos=job.qos,
                                      n_nodes=1, gpus_per_node=job.gpus_per_node, submit=job.end,
                                      duration=job.recipe["second_duration"])
                second.recipe = {"state": "COMPLETED"}
                second.restarts = 1
                second.requeue_of = job
                heapq.heappush(heap, (second.submit, second.key, second))

    def _phases(self, job: Job, rng: np.random.Generator) -> list[tuple[int, int, int]]:
        s = job.start
        e = job.alloc_end(self.t1)
        full_end = s + job.duration
        done = job.recipe["state"] == "COMPLETED"
        m = 60
        k = job.kind
        job.fb_mib = float(rng.uniform(8000, 60000))
        if k in ("eval", "array", "partial"):
            items = [(STARTUP, int(rng.uniform(60, 180)))]
            total = 0
            while total < job.duration:
                seg = int(rng.uniform(3, 20) * m)
                items.append((EVAL, seg))
                total += seg
                if rng.random() < 0.5:
                    stall = int(rng.uniform(1, 7) * m)
                    items.append((IDLE, stall))
                    total += stall
            items.append((EVAL, None))
            if k == "partial":
                job.idle_gpus = job.gpus[1:]
            ph = lay_phases(s, full_end, items, teardown=int(rng.uniform(30, 90)) if done else 0)
        elif k == "debug":
            ph = lay_phases(s, full_end, [(STARTUP, int(rng.uniform(30, 120))), (LIGHT, None)],
                            teardown=int(rng.uniform(30, 90)) if done else 0)
        elif k in ("train", "requeue"):
            job.mfu = float(rng.uniform(0.3, 0.5))
            job.fb_mib = float(rng.uniform(50000, 76000))
            items = [(STARTUP, int(rng.uniform(120, 420)))]
            every = int(rng.uniform(20, 40) * m)
            total = 0
            while total < job.duration:
                items += [(TRAIN, every), (SAVE, int(rng.uniform(60, 120)))]
                total += every + 90
            items.append((TRAIN, None))
            ph = lay_phases(s, full_end, items, teardown=int(rng.uniform(30, 90)) if done else 0)
        elif k == "interactive":
            job.fb_mib = float(rng.uniform(2000, 30000))
            ph = lay_phases(s, full_end, [(STARTUP, int(rng.uniform(30, 90))), (LIGHT, int(rng.uniform(5, 30) * m)),
                                          (IDLE, int(rng.uniform(60, 180) * m)),
                                          (LIGHT, int(rng.uniform(5, 15) * m)), (IDLE, None)])
        elif k == "hung":
            job.mfu = float(rng.uniform(0.3, 0.45))
            job.fb_mib = float(rng.uniform(60000, 76000))
            ph = lay_phases(s, full_end, [(STARTUP, int(rng.uniform(120, 300))),
                                          (TRAIN, int(rng.uniform(15, 40) * m)), (IDLE, None)])
        else:
            raise ValueError(k)
        return clip_phases(ph, s, e)

    # ---------------------------------------------------------------- outages
    def _outages(self, runs: list[Run]) -> dict[int, list[tuple[int, int]]]:
        rng = np.random.default_rng([self.seed, 404])
        n = self.knobs.outages if self.knobs.outages is not None else \
            max(1, round(2 * self.days / 7 * len(self.fleet.nodes) / 16))
        cands = [j for r in runs for j in r.jobs]
        out: dict[int, list[tuple[int, int]]] = {}
        tries = 0
        while n > 0 and cands and tries < 200:
            tries += 1
            job = cands[int(rng.integers(0, len(cands)))]
            length = int(rng.uniform(2, 4) * 3600) // SAMPLE_S * SAMPLE_S
            lo = job.phases[0][1] + 1800
            hi = job.alloc_end(self.t1) - length - 1800
            if hi <= lo:
                continue
            a = align_up(rng.uniform(lo, hi))
            b = a + length
            if any(k == IDLE and pa < b and pb > a for pa, pb, k in job.phases):
                continue
            node = job.nodes[int(rng.integers(0, len(job.nodes)))]
            if any(x < b + 3600 and y + 3600 > a for x, y in out.get(node, [])):
                continue
            out.setdefault(node, []).append((a, b))
            n -= 1
        return {k: sorted(v) for k, v in sorted(out.items())}

    # ---------------------------------------------------------------- Slurm ids
    def _assign_ids(self, bases: dict[str, int] | None = None) -> None:
        """Slurm ids per cluster, from the cluster's id base (`bases`, default the billed clusters')."""
        bases = bases or {c: CLUSTER_BY_NAME[c].job_id_base for c in ("east", "west")}
        for c, base in bases.items():
            nxt = base + 1 + int(hexdigest(self.seed, "jobid", c, n=6), 16) % 500
            groups: dict[int, list[Job]] = {}
            for j in self.jobs:
                if j.cluster == c and j.array is not None:
                    groups.setdefault(j.array[0], []).append(j)
            for job in sorted((j for j in self.jobs if j.cluster == c), key=lambda j: (j.submit, j.key)):
                if job.requeue_of is not None or job.job_id:
                    continue
                if job.array is None:
                    job.job_id = job.job_id_raw = str(nxt)
                    nxt += 1
                    continue
                # the array's id is its last task's JobIDRaw; the other tasks got fresh ids when they were
                # split off (how sacct shows arrays, cf. reportseff's test data)
                tasks = sorted(groups[job.array[0]], key=lambda j: j.array[1])
                for i, task in enumerate(tasks):
                    task.job_id = f"{nxt}_{task.array[1]}"
                    task.job_id_raw = str(nxt if i == len(tasks) - 1 else nxt + 1 + i)
                nxt += len(tasks)
        for job in self.jobs:
            if job.requeue_of is not None:
                job.job_id, job.job_id_raw = job.requeue_of.job_id, job.requeue_of.job_id_raw
            if job.run_id:
                job.comment = f"run_id={job.run_id}"
