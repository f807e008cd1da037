"""What a team's waste report says, read from `marts.*` (and the config's exchange rates, fx.py).

Each query is a file `sql/reports/waste_*.sql` with the team and the days bound as parameters. This
module turns the rows into plain objects; the renderers (html_page, markdown, the CSV in waste) only
format them, so every output says the same numbers.

Money is never added across currencies: the report has a section (`ReportData`) per currency the
team was billed in, each with its own totals, waste, charts and tables. What does not depend on a
currency stays whole: a job's, node's, interruption's or run's GPU time and tokens are shown as they
are beside the part of its cost billed in the section's currency, and the team's MFU is over all its
runs. (About 400 lines, one module: the report's objects and the one pass that fills them.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, localcontext

import duckdb
from typing import TYPE_CHECKING

from models import ledger_categories
from pipelines.lib.warehouse import sql
from pipelines.reports.fx import Converted, ReportingTotals, convert
from pipelines.reports.period import trend_window
from pipelines.reports.underuse import UnderUsedJob, UserCost, jobs_of, users_of
from pipelines.reports.storage import StorageSection

if TYPE_CHECKING:
    from pipelines.reports.savings import Savings

# GPU categories, waste kinds, labels and help: one table, models/ledger_categories.py. Waste kinds are
# listed in that order when they cost the same.
GPU_CATEGORIES = ledger_categories.GPU
WASTE_KINDS = ledger_categories.WASTE
WASTE_LABELS = {name: ledger_categories.BY_NAME[name].label for name in WASTE_KINDS}
WASTE_HELP = {name: ledger_categories.BY_NAME[name].help for name in WASTE_KINDS}
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
    gpu_seconds: float  # all of the job's, whatever currency its nodes were billed in
    effective_cost: Decimal  # the part billed in the section's currency
    waste_gpu_seconds: float
    waste_cost: Decimal  # that cost x the job's wasted share of GPU-seconds


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
    lost_gpu_seconds: float  # all of the interruption's, whatever currency
    restart_gpu_seconds: float
    effective_cost: Decimal  # the part billed in the section's currency
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
    effective_cost: Decimal  # the part billed in the section's currency; GPU time and tokens are the run's
    mfu: float | None  # tokens_kept x flops/token over productive GPU time x peak: what trainers report
    effective_mfu: float | None  # the same over all of the run's GPU time
    goodput: float | None
    cost_per_mtok: Decimal | None  # None too when the run was billed in several currencies
    cost_per_mtok_at_target: Decimal | None
    mfu_gap_cost: Decimal | None
    mfu_target: float | None
    currencies: int = 1  # how many currencies the run's cost was billed in over the period


@dataclass
class RunBudget:
    """A planned run's plan against actual, as of the last day of the period it has a row for."""
    run_id: str
    project: str | None
    as_of: date
    planned_tokens: float
    planned_gpu_hours: float | None
    budget_gpu_hours: float | None
    planned_cost: Decimal | None  # in the plan's currency, the section's
    budget_cost: Decimal | None
    gpu_hours_to_date: float
    cost_to_date: Decimal | None
    tokens_kept_to_date: int
    burn_pct: float | None  # GPU-hours to date / budget GPU-hours
    progress_pct: float  # kept tokens / planned tokens
    projected_gpu_hours: float | None  # at the pace so far
    projected_cost: Decimal | None
    projected_overrun_gpu_hours: float | None  # over the budget (negative: under)
    projected_overrun_cost: Decimal | None


@dataclass
class Scope:
    """Whose report it is and which days it covers: the same for the whole report and each section."""
    team: str
    start: date
    end: date
    label: str
    trend_start: date
    trend_end: date
    data_first_day: date | None
    data_last_day: date | None


@dataclass
class ReportData(Scope):
    """One currency's part of the report: its money, waste, charts and tables. Amounts are in
    `currency` only; GPU time, tokens and MFU are currency-free (see `load`)."""
    currency: str
    by_category: dict[str, tuple[Decimal, Decimal, float]]  # category -> (effective, billed, gpu_seconds)
    daily: list[tuple[date, str, Decimal]]  # trend window: (day, category, effective_cost)
    heatmap: list[tuple[str, int, float, float]]  # (hostname, hour, idle_unallocated s, allocated_idle s)
    heatmap_nodes_total: int
    idle_nodes: list[tuple[str, int, float, float, Decimal]]
    jobs: dict[str, list[JobWaste]]
    interruptions: list[Interruption]  # in the period, one per interruption
    rerun_daily: list[tuple[date, str, float, Decimal]]  # trend window: (day, run_id, gpu_seconds, cost)
    runs: list[RunEfficiency]
    run_budgets: list[RunBudget]  # planned runs in the plan's currency: plan against actual
    team_mfu: float | None = None  # over all of the team's runs, whatever currency they were billed in
    team_effective_mfu: float | None = None
    mfu_target: float | None = None
    mfu_gap_cost: Decimal | None = None  # of this currency's run cost
    reporting: Converted | None = None  # its total and waste in the reporting currency (fx.py); None: no `fx:`
    underused_jobs: list[UnderUsedJob] = field(default_factory=list)  # busy but under-used, worst first
    users: list[UserCost] = field(default_factory=list)  # the team's users by waste and low-activity cost
    low_activity_cost: Decimal = Decimal(0)  # the team's productive cost at low SM activity, in this currency
    run_badput: list[tuple[str, str, Decimal, float]] = field(default_factory=list)  # (run, kind, cost, GPU-s)
    storage: StorageSection | None = None  # inventoried storage (storage.py); None: the team has none

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


@dataclass
class Report(Scope):
    """A team's report: a section per billing currency, in currency order (none: the ledger has no
    cost for the team in the period), and the ledger rows of the CSV, all currencies."""
    sections: list[ReportData]
    ledger: list[tuple]  # the CSV rows
    reporting: ReportingTotals | None = None  # every currency's totals in the reporting currency; None: no `fx:`
    savings: Savings | None = None  # the team's savings opportunities of the period ("What to do"); None: not read

    @property
    def has_data(self) -> bool:
        return bool(self.sections)

    @property
    def currencies(self) -> list[str]:
        return [s.currency for s in self.sections]

    def section(self, currency: str) -> ReportData:
        return next(s for s in self.sections if s.currency == currency)


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


def load(con: duckdb.DuckDBPyConnection, team: str, start: date, end: date, label: str) -> Report:
    """The team's report for [start, end]: a `ReportData` per currency it was billed in. Rows of the
    other marts go to the section of their currency; a row with no currency (a job or run without
    billed cost) goes with the first currency, so it is shown once."""
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'marts'").fetchall()}
    missing = [t for t in MARTS if t not in present]
    if missing:
        raise RuntimeError(f"the warehouse has no marts.{', marts.'.join(missing)}: run `gpuledger run` for the "
                           "days first, or point at another warehouse")
    trend_start, trend_end = trend_window(start, end)
    span = con.execute("SELECT min(day), max(day) FROM marts.fct_cost_daily").fetchall()[0]
    scope = Scope(team, start, end, label, trend_start, trend_end, span[0], span[1])
    p = {"team": team, "start": start, "end": end}
    ledger = query(con, "waste_ledger", **p)
    currencies = [r[0] for r in query(con, "waste_currencies", **p)]
    if not currencies:
        return Report(**vars(scope), sections=[], ledger=ledger)
    # the config's exchange rates, in the published warehouse only (the live one has no finance views)
    has_rates = con.execute("SELECT count(*) FROM information_schema.tables "
                            "WHERE table_schema = 'finance' AND table_name = 'fx_rates'").fetchone()[0]
    reporting = convert(ledger, query(con, "waste_fx_rates") if has_rates else [])
    p["first_currency"] = currencies[0]
    tp = {**p, "start": trend_start, "end": trend_end}

    by_category = _by_currency(query(con, "waste_cost_by_category", **p))
    daily = _by_currency(query(con, "waste_cost_daily", **tp))
    heatmap = _by_currency(query(con, "waste_idle_heatmap", **p))
    idle_nodes = _by_currency(query(con, "waste_idle_nodes", top=TOP, **p))
    jobs = _by_currency(query(con, "waste_jobs", top=TOP, user=None, **p))
    losses = _by_currency(query(con, "waste_rerun_loss", **tp))
    run_rows = query(con, "waste_runs", **p)
    runs = _by_currency(run_rows)
    # warehouses published before plans existed have no budget mart: no plan against actual then
    budgets = _by_currency(query(con, "waste_run_budgets", **p)) if "fct_run_budget_daily" in present else {}
    # warehouses published before the under-use lens have no efficiency marts: no such section then
    lens = {"fct_job_efficiency_daily", "fct_user_cost_daily"} <= present
    underused = _by_currency(query(con, "waste_underuse_jobs", top=TOP, user=None, **p)) if lens else {}
    users = _by_currency(query(con, "waste_underuse_users", top=TOP, **p)) if lens else {}
    low_cost = dict(query(con, "waste_low_activity_cost", **p)) if lens else {}
    badput = _by_currency(query(con, "waste_run_badput", **p)) if "fct_run_badput_daily" in present else {}
    storage = _storage(con, p, tp) if "fct_storage_daily" in present else {}
    # Another mart may hold a currency fct_cost_daily has none of for the team (a run's team comes
    # from its project): it gets a section too rather than being dropped.
    every = sorted(set(currencies).union(by_category, daily, heatmap, idle_nodes, jobs, losses, runs, budgets,
                                         underused, users, badput, storage))
    team_mfu = _team_efficiency(run_rows)
    sections = []
    for c in every:
        heat, nodes_total = _heatmap(heatmap.get(c, []))
        interruptions, rerun_daily = _interruptions(losses.get(c, []), losses, start, end)
        section_runs = runs.get(c, [])
        gaps = [r[15] for r in section_runs if r[15] is not None]
        sections.append(ReportData(
            **vars(scope), currency=c,
            by_category={cat: (e, b, g) for cat, e, b, g in by_category.get(c, [])},
            daily=[(d, cat, e) for d, cat, e, _ in daily.get(c, [])],
            heatmap=heat, heatmap_nodes_total=nodes_total,
            idle_nodes=idle_nodes.get(c, []),
            jobs=jobs_by_kind(jobs.get(c, [])),
            interruptions=interruptions, rerun_daily=rerun_daily,
            runs=[_run(r) for r in section_runs],
            run_budgets=[RunBudget(*r) for r in budgets.get(c, [])],
            underused_jobs=jobs_of(underused.get(c, [])), users=users_of(users.get(c, [])),
            low_activity_cost=low_cost.get(c) or Decimal(0),
            run_badput=badput.get(c, []), storage=storage.get(c),
            **team_mfu, mfu_gap_cost=sum(gaps, Decimal(0)) if gaps else None,
            reporting=reporting.by_currency.get(c) if reporting else None,
        ))
    return Report(**vars(scope), sections=sections, ledger=ledger, reporting=reporting)


def _storage(con: duckdb.DuckDBPyConnection, p: dict, tp: dict) -> dict[str, StorageSection]:
    """The team's inventoried storage per currency: the period's by kind and tier, the trend's bytes a
    day, the runs' checkpoints, and the storage opportunities of the period's savings."""
    by_kind = _by_currency(query(con, "storage_by_kind_tier", **p))
    daily = _by_currency(query(con, "storage_daily", **tp))
    runs = _by_currency(query(con, "storage_runs", top=TOP, **p))
    policy = _by_currency(query(con, "storage_policy_savings", **p))
    return {c: StorageSection(rows, daily.get(c, []), runs.get(c, []), policy.get(c, [])) for c, rows in by_kind.items()}


def _by_currency(rows: list[tuple]) -> dict[str, list[tuple]]:
    """Rows whose first column is the currency, grouped by it (the rest of each row kept in order)."""
    out: dict[str, list[tuple]] = {}
    for row in rows:
        out.setdefault(row[0], []).append(row[1:])
    return out


def _heatmap(rows: list[tuple]) -> tuple[list[tuple], int]:
    """The HEATMAP_NODES nodes with the most idle time, and how many nodes had some."""
    node_idle: dict[str, float] = {}
    for host, _, unalloc, alloc in rows:
        node_idle[host] = node_idle.get(host, 0.0) + unalloc + alloc
    keep = set(sorted(node_idle, key=lambda h: (-node_idle[h], h))[:HEATMAP_NODES])
    return [row for row in rows if row[0] in keep], len(node_idle)


def jobs_by_kind(rows: list[tuple]) -> dict[str, list[JobWaste]]:
    jobs: dict[str, list[JobWaste]] = {k: [] for k in JOB_KINDS}
    for r in rows:
        (job_uid, job_id, cluster, run_id, project, user, name, state, start_ts, end_ts, gpus,
         gs, cost, idle_s, failed_s, unmon_s, idle_rank, failed_rank, unmon_rank) = r
        for kind, waste_s, rank in (("allocated_idle", idle_s, idle_rank), ("failed_job", failed_s, failed_rank),
                                    ("unmonitored", unmon_s, unmon_rank)):
            if waste_s > 0 and rank <= TOP:
                jobs[kind].append(JobWaste(job_uid, job_id, cluster, run_id, project, user, name, state, start_ts,
                                           end_ts, gpus, gs, cost, waste_s, _share(cost, waste_s, gs)))
    for kind in jobs:
        jobs[kind].sort(key=lambda j: (-j.waste_cost, j.job_uid))
    return jobs


def _interruptions(rows: list[tuple], every_currency: dict[str, list[tuple]], start: date,
                   end: date) -> tuple[list[Interruption], list[tuple]]:
    """One currency's interruptions in the period (most expensive first) and its rerun loss per day and
    run over the trend window. One interruption can have a row per day (it crossed midnight) and per
    currency: the chart wants days, the table wants interruptions, each with all of its GPU time
    (`every_currency`: the mart puts it on the first currency's rows) and this currency's cost."""
    seconds: dict[str, list[float]] = {}
    for currency_rows in every_currency.values():
        for (day, _, _, uid, *_, lost, restart, _, _) in currency_rows:
            if start <= day <= end:
                acc = seconds.setdefault(uid, [0.0, 0.0])
                acc[0] += lost
                acc[1] += restart
    rerun_daily: dict[tuple[date, str], list] = {}
    interruptions: dict[str, Interruption] = {}
    for (day, run_id, job_id, uid, name, user, state, cause, at, ckpt, lost, restart, cost, estimate) in rows:
        acc = rerun_daily.setdefault((day, run_id or "(no run)"), [0.0, Decimal(0)])
        acc[0] += lost + restart
        acc[1] += cost
        if not start <= day <= end:
            continue
        if uid in interruptions:
            i = interruptions[uid]
            i.effective_cost += cost
            i.last_checkpoint_at = i.last_checkpoint_at or ckpt
            i.is_estimate = i.is_estimate or estimate
        else:
            interruptions[uid] = Interruption(uid, run_id, job_id, name, user, state, cause, at, ckpt,
                                              *seconds[uid], cost, bool(estimate))
    return (sorted(interruptions.values(), key=lambda i: (-i.effective_cost, i.interrupted_job_uid))[:TOP],
            [(d, run, v[0], v[1]) for (d, run), v in sorted(rerun_daily.items())])


def _run(r: tuple) -> RunEfficiency:
    (run_id, project, gpu_model, dtype, _days, gs, productive_gs, tok, kept, cost, measured_cost, measured_kept,
     model_flops, peak_all, peak_productive, gap, target, currencies) = r
    eff = model_flops / peak_all if model_flops is not None and peak_all else None
    mfu = model_flops / peak_productive if model_flops is not None and peak_productive else None
    per_mtok = at_target = None
    if measured_kept and measured_cost is not None:  # None: the run's cost is in several currencies
        with localcontext() as ctx:
            ctx.prec = 60
            per_mtok = measured_cost / Decimal(measured_kept) * Decimal(1_000_000)
            # cost_per_mtok = adjusted · target / effective_mfu, so adjusted = cost_per_mtok · eff / target
            if eff is not None and target:
                at_target = per_mtok * Decimal(repr(eff)) / Decimal(repr(target))
    return RunEfficiency(run_id, project, gpu_model, dtype, gs, productive_gs, tok, kept, cost, mfu, eff,
                         productive_gs / gs if gs else None, per_mtok, at_target, gap, target, currencies)


def _team_efficiency(rows: list[tuple]) -> dict:
    """The team's MFU over all its measured runs, whatever currency they were billed in: a ratio of
    sums, so big runs weigh what they cost. `rows` has a row per run and currency, each carrying the
    run's own sums; each run counts once."""
    runs = {r[1]: r for r in rows}.values()
    model = sum(r[13] or 0.0 for r in runs)
    peak_all = sum(r[14] or 0.0 for r in runs)
    peak_productive = sum(r[15] or 0.0 for r in runs)
    targets = [r[17] for r in runs if r[17] is not None]
    return {"team_effective_mfu": model / peak_all if peak_all else None,
            "team_mfu": model / peak_productive if peak_productive else None,
            "mfu_target": max(targets) if targets else None}
