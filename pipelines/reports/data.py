"""What a team's waste report says, read from `marts.*` only.

Each query is a file `sql/reports/waste_*.sql` with the team and the days bound as parameters. This
module turns the rows into plain objects; the renderers (html_page, markdown, the CSV in waste) only
format them, so every output says the same numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, localcontext

import duckdb

from pipelines.lib.warehouse import sql
from pipelines.reports.period import trend_window

# The ledger's GPU node categories (DESIGN §3); the rest (storage, network, shared, tax ...) is not GPU time.
GPU_CATEGORIES = ("productive", "rerun_loss", "allocated_idle", "failed_job", "unmonitored", "idle_unallocated")
# Waste kinds, in the order the report lists them when they cost the same.
# `unmonitored` is in it because the ledger never counts unobserved GPU time as used (DESIGN §3); so
# waste = GPU cost − productive cost.
WASTE_KINDS = ("idle_unallocated", "allocated_idle", "failed_job", "rerun_loss", "unmonitored")
WASTE_LABELS = {
    "idle_unallocated": "Idle GPUs, no job",
    "allocated_idle": "Hung / idle jobs",
    "failed_job": "Failed jobs",
    "rerun_loss": "Work lost to interruptions",
    "unmonitored": "Unmonitored (no telemetry)",
}
WASTE_HELP = {
    "idle_unallocated": "billed GPUs of the team's pool that no job held",
    "allocated_idle": "GPUs a job held at 0 % activity for 10+ minutes: hung jobs, idle notebooks, stalled loaders",
    "failed_job": "jobs that ended failed, timed out, cancelled or out of memory and were not resumed",
    "rerun_loss": "compute since the last checkpoint before a crash, plus restart time until training resumed",
    "unmonitored": "allocated GPUs with no telemetry: not known to be used, so not counted as productive",
}
JOB_KINDS = ("allocated_idle", "failed_job", "unmonitored")  # rerun loss is per interruption
TOP = 10  # rows per table
HEATMAP_NODES = 30  # a heatmap taller than this stops being readable; the table lists the rest


@dataclass
class JobWaste:
    job_uid: str
    job_id: str
    cluster: str | None
    run_id: str | None
    project: str | None
    user_name: str | None
    job_name: str | None
    state: str | None
    start_ts: datetime | None
    end_ts: datetime | None
    gpus: int | None
    gpu_seconds: float
    effective_cost: Decimal
    waste_gpu_seconds: float
    waste_cost: Decimal  # the job's cost x its wasted share of GPU-seconds


@dataclass
class Interruption:
    interrupted_job_uid: str
    run_id: str | None
    job_id: str | None
    job_name: str | None
    user_name: str | None
    state: str | None
    cause: str | None
    interrupted_at: datetime | None
    last_checkpoint_at: datetime | None
    lost_gpu_seconds: float
    restart_gpu_seconds: float
    effective_cost: Decimal
    is_estimate: bool


@dataclass
class RunEfficiency:
    run_id: str
    project: str | None
    gpu_model: str | None
    dtype: str | None
    gpu_seconds: float
    productive_gpu_seconds: float
    tokens: int | None
    tokens_kept: int | None
    effective_cost: Decimal
    mfu: float | None  # tokens_kept x flops/token over productive GPU time x peak: what trainers report
    effective_mfu: float | None  # the same over all of the run's GPU time
    goodput: float | None
    cost_per_mtok: Decimal | None
    cost_per_mtok_at_target: Decimal | None
    mfu_gap_cost: Decimal | None
    mfu_target: float | None


@dataclass
class ReportData:
    team: str
    start: date
    end: date
    label: str
    trend_start: date
    trend_end: date
    data_first_day: date | None
    data_last_day: date | None
    by_category: dict[str, tuple[Decimal, Decimal, float]]  # category -> (effective, billed, gpu_seconds)
    daily: list[tuple[date, str, Decimal]]  # trend window: (day, category, effective_cost)
    ledger: list[tuple]  # the CSV rows
    heatmap: list[tuple[str, int, float, float]]  # (hostname, hour, idle_unallocated s, allocated_idle s)
    heatmap_nodes_total: int
    idle_nodes: list[tuple[str, int, float, float, Decimal]]
    jobs: dict[str, list[JobWaste]]
    interruptions: list[Interruption]  # in the period, one per interruption
    rerun_daily: list[tuple[date, str, float, Decimal]]  # trend window: (day, run_id, gpu_seconds, cost)
    runs: list[RunEfficiency]
    team_mfu: float | None = None
    team_effective_mfu: float | None = None
    mfu_target: float | None = None
    mfu_gap_cost: Decimal | None = None

    @property
    def has_data(self) -> bool:
        return bool(self.by_category)

    def cost(self, category: str) -> Decimal:
        return self.by_category.get(category, (Decimal(0), Decimal(0), 0.0))[0]

    def gpu_seconds(self, category: str) -> float:
        return self.by_category.get(category, (Decimal(0), Decimal(0), 0.0))[2]

    @property
    def total_cost(self) -> Decimal:
        return sum((v[0] for v in self.by_category.values()), Decimal(0))

    @property
    def gpu_cost(self) -> Decimal:
        return sum((self.cost(c) for c in GPU_CATEGORIES), Decimal(0))

    @property
    def waste_cost(self) -> Decimal:
        return sum((self.cost(k) for k in WASTE_KINDS), Decimal(0))

    @property
    def waste_gpu_seconds(self) -> float:
        return sum(self.gpu_seconds(k) for k in WASTE_KINDS)


_PARAM = re.compile(r"\$([a-z_][a-z0-9_]*)")


def query(con: duckdb.DuckDBPyConnection, name: str, **params: object) -> list[tuple]:
    """Rows of sql/reports/<name>.sql, binding only the parameters it names (DuckDB refuses extras)."""
    text = sql(f"reports/{name}")
    names = set(_PARAM.findall(re.sub(r"--[^\n]*", "", text)))
    missing = names - params.keys()
    if missing:
        raise KeyError(f"reports/{name}.sql needs parameter(s) {sorted(missing)}")
    return con.execute(text, {k: params[k] for k in names}).fetchall()


def _share(cost: Decimal, part: float, whole: float) -> Decimal:
    if not whole:
        return Decimal(0)
    with localcontext() as ctx:
        ctx.prec = 60  # cost has 18 decimals; keep them all through the multiplication
        return cost * Decimal(repr(part)) / Decimal(repr(whole))


MARTS = ("fct_cost_daily", "fct_job_cost", "fct_rerun_loss", "fct_idle_waste_daily", "fct_node_hourly",
         "fct_run_efficiency_daily")


def load(con: duckdb.DuckDBPyConnection, team: str, start: date, end: date, label: str) -> ReportData:
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'marts'").fetchall()}
    missing = [t for t in MARTS if t not in present]
    if missing:
        raise RuntimeError(f"the warehouse has no marts.{', marts.'.join(missing)}: run `gpuledger run` for the "
                           "days first, or point at another warehouse")
    trend_start, trend_end = trend_window(start, end)
    p = {"team": team, "start": start, "end": end}
    tp = {"team": team, "start": trend_start, "end": trend_end}
    span = con.execute("SELECT min(day), max(day) FROM marts.fct_cost_daily").fetchall()[0]

    by_category = {c: (e, b, g) for c, e, b, g in query(con, "waste_cost_by_category", **p)}
    heat = query(con, "waste_idle_heatmap", **p)
    node_idle: dict[str, float] = {}
    for host, _, unalloc, alloc in heat:
        node_idle[host] = node_idle.get(host, 0.0) + unalloc + alloc
    keep = set(sorted(node_idle, key=lambda h: (-node_idle[h], h))[:HEATMAP_NODES])

    jobs: dict[str, list[JobWaste]] = {k: [] for k in JOB_KINDS}
    for r in query(con, "waste_jobs", top=TOP, **p):
        (job_uid, job_id, cluster, run_id, project, user, name, state, start_ts, end_ts, gpus,
         gs, cost, idle_s, failed_s, unmon_s, idle_rank, failed_rank, unmon_rank) = r
        for kind, waste_s, rank in (("allocated_idle", idle_s, idle_rank), ("failed_job", failed_s, failed_rank),
                                    ("unmonitored", unmon_s, unmon_rank)):
            if waste_s > 0 and rank <= TOP:
                jobs[kind].append(JobWaste(job_uid, job_id, cluster, run_id, project, user, name, state, start_ts,
                                           end_ts, gpus, gs, cost, waste_s, _share(cost, waste_s, gs)))
    for kind in jobs:
        jobs[kind].sort(key=lambda j: (-j.waste_cost, j.job_uid))

    # One interruption can have a row per day (it crossed midnight): the chart wants days, the table
    # wants interruptions.
    trend_loss = query(con, "waste_rerun_loss", **tp)
    rerun_daily: dict[tuple[date, str], list] = {}
    interruptions: dict[str, Interruption] = {}
    for (day, run_id, job_id, uid, name, user, state, cause, at, ckpt, lost, restart, cost, estimate) in trend_loss:
        acc = rerun_daily.setdefault((day, run_id or "(no run)"), [0.0, Decimal(0)])
        acc[0] += lost + restart
        acc[1] += cost
        if not start <= day <= end:
            continue
        if uid in interruptions:
            i = interruptions[uid]
            i.lost_gpu_seconds += lost
            i.restart_gpu_seconds += restart
            i.effective_cost += cost
            i.last_checkpoint_at = i.last_checkpoint_at or ckpt
            i.is_estimate = i.is_estimate or estimate
        else:
            interruptions[uid] = Interruption(uid, run_id, job_id, name, user, state, cause, at, ckpt, lost, restart,
                                              cost, bool(estimate))

    run_rows = query(con, "waste_runs", **p)
    data = ReportData(
        team=team, start=start, end=end, label=label, trend_start=trend_start, trend_end=trend_end,
        data_first_day=span[0], data_last_day=span[1],
        by_category=by_category,
        daily=[(d, c, e) for d, c, e, _ in query(con, "waste_cost_daily", **tp)],
        ledger=query(con, "waste_ledger", **p),
        heatmap=[row for row in heat if row[0] in keep],
        heatmap_nodes_total=len(node_idle),
        idle_nodes=query(con, "waste_idle_nodes", top=TOP, **p),
        jobs=jobs,
        interruptions=sorted(interruptions.values(), key=lambda i: (-i.effective_cost, i.interrupted_job_uid))[:TOP],
        rerun_daily=[(d, run, v[0], v[1]) for (d, run), v in sorted(rerun_daily.items())],
        runs=[_run(r) for r in run_rows],
    )
    _team_efficiency(data, run_rows)
    return data


def _run(r: tuple) -> RunEfficiency:
    (run_id, project, gpu_model, dtype, _days, gs, productive_gs, tok, kept, cost, measured_cost, measured_kept,
     model_flops, peak_all, peak_productive, gap, target) = r
    eff = model_flops / peak_all if model_flops is not None and peak_all else None
    mfu = model_flops / peak_productive if model_flops is not None and peak_productive else None
    per_mtok = at_target = None
    if measured_kept:
        with localcontext() as ctx:
            ctx.prec = 60
            per_mtok = measured_cost / Decimal(measured_kept) * Decimal(1_000_000)
            # DESIGN §4: cost_per_mtok = adjusted · target / effective_mfu, so adjusted = cost_per_mtok · eff / target
            if eff is not None and target:
                at_target = per_mtok * Decimal(repr(eff)) / Decimal(repr(target))
    return RunEfficiency(run_id, project, gpu_model, dtype, gs, productive_gs, tok, kept, cost, mfu, eff,
                         productive_gs / gs if gs else None, per_mtok, at_target, gap, target)


def _team_efficiency(data: ReportData, rows: list[tuple]) -> None:
    """The team's MFU over all its measured runs: a ratio of sums, so big runs weigh what they cost."""
    model = sum(r[12] or 0.0 for r in rows)
    peak_all = sum(r[13] or 0.0 for r in rows)
    peak_productive = sum(r[14] or 0.0 for r in rows)
    data.team_effective_mfu = model / peak_all if peak_all else None
    data.team_mfu = model / peak_productive if peak_productive else None
    targets = [r[16] for r in rows if r[16] is not None]
    data.mfu_target = max(targets) if targets else None
    gaps = [r[15] for r in rows if r[15] is not None]
    data.mfu_gap_cost = sum(gaps, Decimal(0)) if gaps else None
