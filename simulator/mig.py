"""One node of east whose GPUs are split into MIG instances, for inference and debugging jobs (Knobs.mig_node).

    east-mig-001   8 × H100 80GB, pool east-mig owned by team inference, billed on demand by the hour (USD)
    GPUs 0–3       3g.40gb + 2g.20gb + 2g.20gb (GPU_I_ID 1, 2, 3): inference servers (eval-harness, distill)
    GPUs 4–7       7 × 1g.10gb (GPU_I_ID 1–7): debugging jobs of every team's projects

Each instance runs a stream of Slurm jobs, one at a time, each holding that one instance
(`gres/gpu=1,gres/gpu:<profile>=1`), all ended by the window's end. A job is busy except, for some, one idle
stretch of 15–60 minutes inside it; some debugging jobs fail. Telemetry is one DCGM series per instance
(GPU_I_ID set, labelled with the job holding it; unlabelled and idle between jobs), written to the node's
own Parquet file per day. Nothing here touches the rest of the fleet: the node is not in `Fleet.nodes`, so
the main workload never schedules on it.

Truth, from these jobs' own state (never the pipeline's rules): a job's seconds on a day × its instance's
compute slices / 7 — `allocated_idle` in its idle stretch, else `failed_job` when it failed, else
`productive`; the node's 8 GPU-days less all of that is `idle_unallocated` of team inference. Exact
fractions, written as decimals.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .fleet import ACCOUNTS, CLUSTER_BY_NAME, PROJECT_TEAM, PROJECTS, USERS, hexdigest, uuid_like
from .jobs import SAMPLE_S
from .writers_dcgm import N_SAMPLES
from .writers_slurm import FIELDS

HOST = "east-mig-001"
CLUSTER = "east"
POOL, OWNER = "east-mig", "inference"
GPU_MODEL = "NVIDIA H100 80GB HBM3"
GPUS = 8
JOB_ID_BASE = 990000
DAY = 86400
# gpu -> its instances' profiles and compute slices of 7, by GPU_I_ID (1-based)
LAYOUT = {g: (("3g.40gb", 3), ("2g.20gb", 2), ("2g.20gb", 2)) for g in range(4)} | \
         {g: (("1g.10gb", 1),) * 7 for g in range(4, 8)}
INFERENCE_PROJECTS = ("eval-harness", "distill")
SCHEMA = pa.schema([
    ("timestamp", pa.timestamp("us", tz="UTC")), ("hostname", pa.string()), ("gpu", pa.int32()),
    ("UUID", pa.string()), ("modelName", pa.string()), ("metric", pa.string()), ("value", pa.float64()),
    ("hpc_job", pa.string()), ("GPU_I_ID", pa.string()),
])


@dataclass(frozen=True)
class MigJob:
    job_id: str
    project: str
    user: str
    gpu: int
    instance: str          # GPU_I_ID
    profile: str
    slices: int            # compute slices of the GPU's 7
    start: int
    end: int
    idle: tuple[int, int] | None
    failed: bool

    @property
    def share(self) -> Fraction:
        return Fraction(self.slices, 7)


def resource_id(seed: int) -> str:
    return "i-0" + hexdigest(seed, "instance", HOST, n=16)


def build_jobs(seed: int, t0: int, t1: int) -> list[MigJob]:
    """Every instance's stream of jobs, each ended before the window's end; times on the 30 s grid."""
    jobs: list[MigJob] = []
    grid = lambda t: int(t) // SAMPLE_S * SAMPLE_S  # noqa: E731
    for gpu, instances in LAYOUT.items():
        for i, (profile, slices) in enumerate(instances, start=1):
            rng = np.random.default_rng([seed, 909, gpu, i])
            inference = slices > 1
            t = grid(t0 + rng.integers(0, 3 * 3600))
            while True:
                duration = grid(rng.integers(2 * 3600, 10 * 3600) if inference else rng.integers(1200, 3 * 3600))
                end = t + duration
                if end > t1 - 600:
                    break
                project = str(rng.choice(INFERENCE_PROJECTS if inference else PROJECTS))
                team_users = USERS[PROJECT_TEAM[project]]
                user = team_users[int(rng.integers(0, len(team_users)))][0]
                idle = None
                if duration >= 3600 and rng.random() < 0.35:
                    length = grid(rng.integers(15 * 60, min(60 * 60, duration - 1200)))
                    a = grid(t + rng.integers(600, duration - length - 300))
                    idle = (a, a + length)
                failed = not inference and rng.random() < 0.12
                jobs.append(MigJob(str(JOB_ID_BASE + len(jobs)), project, user, gpu, str(i), profile, slices,
                                   t, end, idle, failed))
                t = grid(end + rng.integers(600, 3 * 3600))
    return jobs


def add_bill(fd, seed: int, day: dt.date) -> None:
    """The node's 24 on-demand instance hours of `day` into the day's FOCUS lines (east's account, USD)."""
    spec = CLUSTER_BY_NAME[CLUSTER]
    d0 = dt.datetime(day.year, day.month, day.day)
    for h in range(24):
        a, b = d0 + dt.timedelta(hours=h), d0 + dt.timedelta(hours=h + 1)
        fd.add(a, b, "Usage", "Compute", spec.account.compute_service, spec.on_demand_hourly, spec.on_demand_hourly,
               description=f"{spec.account.symbol}{spec.on_demand_hourly} per On Demand Linux "
                           f"{spec.instance_type} Instance Hour (MIG)",
               region=spec.region, resource_id=resource_id(seed), resource_name=HOST, resource_type="instance",
               cluster=CLUSTER, qty=Decimal(1), unit="Hours",
               tags={"node": HOST, "cluster": CLUSTER, "pool": POOL, "team": OWNER})


def inventory_row(seed: int) -> list:
    return [HOST, CLUSTER, resource_id(seed), GPU_MODEL, GPUS, POOL, OWNER]


def write_sacct(path: Path, jobs: list[MigJob]) -> int:
    """The node's jobs as one `sacct -P` export taken at the window's end (east's times are UTC)."""
    fmt = lambda t: dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")  # noqa: E731
    lines = ["|".join(FIELDS)]
    for j in jobs:
        state, code = ("FAILED", "1:0") if j.failed else ("COMPLETED", "0:0")
        name = "vllm-serve" if j.slices > 1 else "debug-mig"
        tres = f"billing=4,cpu=4,gres/gpu=1,gres/gpu:{j.profile}=1,mem=64G,node=1"
        lines.append("|".join([j.job_id, j.job_id, name, j.user, ACCOUNTS[j.project], "mig", state, code,
                               fmt(j.start), fmt(j.start), fmt(j.end), tres, HOST, "", "0", "normal"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(jobs)


def write_day(path: Path, seed: int, jobs: list[MigJob], day0: int) -> tuple[int, int]:
    """One DCGM Parquet file of the node's instance series for the day. Returns (rows, samples)."""
    rng = np.random.default_rng([seed, 910, day0])
    ts = day0 + np.arange(N_SAMPLES, dtype=np.int64) * SAMPLE_S
    cols: dict[str, list] = {f.name: [] for f in SCHEMA}
    uuids = {g: "GPU-" + uuid_like(seed, "gpu", HOST, g) for g in LAYOUT}
    for gpu, instances in LAYOUT.items():
        for i in range(1, len(instances) + 1):
            label = np.full(N_SAMPLES, None, dtype=object)
            busy = np.zeros(N_SAMPLES, dtype=bool)
            for j in jobs:
                if j.gpu != gpu or j.instance != str(i) or j.end <= day0 or j.start >= day0 + DAY:
                    continue
                held = (ts >= j.start) & (ts < j.end)
                label[held] = j.job_id
                work = held.copy()
                if j.idle:
                    work &= ~((ts >= j.idle[0]) & (ts < j.idle[1]))
                busy |= work
            util = np.where(busy, np.round(rng.uniform(30, 95, N_SAMPLES)), 0.0)
            sm = np.where(busy, np.round(rng.uniform(0.3, 0.7, N_SAMPLES), 6), 0.0)   # never low activity
            for metric, values in (("DCGM_FI_DEV_GPU_UTIL", util), ("DCGM_FI_PROF_SM_ACTIVE", sm)):
                cols["timestamp"].append(ts * 1_000_000)
                cols["hostname"].append(np.full(N_SAMPLES, HOST, dtype=object))
                cols["gpu"].append(np.full(N_SAMPLES, gpu, dtype=np.int32))
                cols["UUID"].append(np.full(N_SAMPLES, uuids[gpu], dtype=object))
                cols["modelName"].append(np.full(N_SAMPLES, GPU_MODEL, dtype=object))
                cols["metric"].append(np.full(N_SAMPLES, metric, dtype=object))
                cols["value"].append(values)
                cols["hpc_job"].append(label)
                cols["GPU_I_ID"].append(np.full(N_SAMPLES, str(i), dtype=object))
    table = pa.Table.from_arrays([pa.array(np.concatenate(cols[f.name]), type=f.type) for f in SCHEMA],
                                 schema=SCHEMA)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", use_dictionary=True)
    n_series = sum(len(v) for v in LAYOUT.values())
    return table.num_rows, n_series * N_SAMPLES


def add_truth(truth, day: dt.date, day0: int, jobs: list[MigJob]) -> None:
    """The node's GPU-seconds of the day per team, project and category (exact fractions)."""
    allocated = Fraction(0)
    day1 = day0 + DAY
    for j in jobs:
        a, b = max(j.start, day0), min(j.end, day1)
        if b <= a:
            continue
        idle = 0
        if j.idle:
            idle = max(0, min(j.idle[1], b) - max(j.idle[0], a))
        rest = (b - a) - idle
        team = PROJECT_TEAM[j.project]
        for category, seconds in (("allocated_idle", idle), ("failed_job" if j.failed else "productive", rest)):
            if seconds:
                truth.counts[(day.isoformat(), team, j.project, category)] += seconds * j.share
                allocated += seconds * j.share
    truth.counts[(day.isoformat(), OWNER, "_unallocated", "idle_unallocated")] += GPUS * DAY - allocated
