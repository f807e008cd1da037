"""The charts of the HTML waste report (pipelines/reports/html_page.py), a section each: daily cost by
category and waste by kind, idle GPU-hours by node and hour, work lost to interruptions per run, each
run's badput by kind, and MFU and cost per token per run. SVG from pipelines/reports/svg.py; every text
from input is escaped with `esc` where it is written."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from pipelines.reports import storage, svg
from pipelines.reports.data import WASTE_KINDS, ReportData
from pipelines.reports.fmt import esc, gpu_hours, money, money_short, pct, ratio_pct
from pipelines.reports.summary import CATEGORY_STYLE, category_style, trend_text


def days_of(d: ReportData) -> list:
    return [d.trend_start + timedelta(days=i) for i in range((d.trend_end - d.trend_start).days + 1)]


def cost_chart(d: ReportData) -> str:
    days = days_of(d)
    c = d.currency

    def axis(value: float) -> str:
        return money_short(value, c)

    cell = {(day, c): v for day, c, v in d.daily}
    categories = [c for c, _, _ in CATEGORY_STYLE] + sorted({c for _, c, _ in d.daily} - {c for c, _, _ in CATEGORY_STYLE})
    series = []
    for cat in categories:
        label, color = category_style(cat)
        values = [cell.get((day, cat), Decimal(0)) for day in days]
        series.append(svg.Series(label, color, [float(v) for v in values],
                                 [f"{day}: {label} {money(v, c)}" for day, v in zip(days, values)]))
    totals = [axis(float(sum((cell.get((day, cat), Decimal(0)) for cat in categories), Decimal(0)))) for day in days]
    labels = [day.strftime("%a %d %b") if len(days) <= 10 else day.strftime("%d %b") for day in days]
    highlight = days.index(d.end) if d.start == d.end and d.end in days else None
    chart = svg.stacked_bars(labels, series, totals, y_format=axis, label="Daily cost by category",
                             highlight=highlight)
    # The same days, waste only, on its own scale: beside storage and productive time it is a sliver.
    waste = [s for cat, s in zip(categories, series) if cat in WASTE_KINDS]
    waste_totals = [axis(float(sum((cell.get((day, k), Decimal(0)) for k in WASTE_KINDS), Decimal(0)))) for day in days]
    waste_chart = svg.stacked_bars(labels, waste, waste_totals, y_format=axis, label="Daily waste by kind",
                                   height=250, highlight=highlight)
    return (f"<section><h2>Daily cost by category</h2><p class=\"note\">{esc(trend_text(d))} "
            "Waste in red and orange at the bottom, productive GPU time in green, other costs in blue and grey; "
            f"credits below zero.</p>{chart}"
            "<h3>Daily waste by kind</h3><p class=\"note\">The waste of the chart above on its own scale.</p>"
            f"{waste_chart}</section>")


def idle_heatmap(d: ReportData) -> str:
    if not d.heatmap:
        chart = svg.empty(1180, 90, "No idle GPU time for this team in the period.")
    else:
        cells, totals = {}, {}
        for host, hour, unalloc, alloc in d.heatmap:
            value = (unalloc + alloc) / 3600
            cells[(host, hour)] = (value, f"{host}, {hour:02d}:00–{hour + 1:02d}:00 UTC: {value:.2f} idle GPU-hours "
                                          f"({unalloc / 3600:.2f} no job, {alloc / 3600:.2f} hung jobs)")
            totals[host] = totals.get(host, 0.0) + value
        rows = sorted(totals, key=lambda h: (-totals[h], h))
        chart = svg.heatmap(rows, cells, {h: f"{totals[h]:,.1f}" for h in rows}, label="Idle GPU-hours by node and hour",
                            unit="GPU-h")
    days = (d.end - d.start).days + 1
    extra = (f" Showing the {len({h for h, *_ in d.heatmap})} nodes with the most idle time of "
             f"{d.heatmap_nodes_total}." if d.heatmap_nodes_total > len({h for h, *_ in d.heatmap}) else "")
    over = "" if days == 1 else f", summed over the {days} days"
    return ("<section><h2>Idle GPU-hours by node and hour of day</h2>"
            f"<p class=\"note\">GPUs billed to the team with no job on them, plus GPUs its jobs held at 0 % activity{esc(over)}. "
            f"Nodes with the most idle time first; a row that stays dark is a node to release or fill.{esc(extra)}</p>"
            f"{chart}</section>")


def rerun_chart(d: ReportData) -> str:
    days = days_of(d)
    if not d.rerun_daily:
        chart = svg.empty(1180, 90, "No work was lost to interruptions in these days.")
    else:
        by_run: dict[str, Decimal] = {}
        for _, run, _, cost in d.rerun_daily:
            by_run[run] = by_run.get(run, Decimal(0)) + cost
        runs = sorted(by_run, key=lambda r: (-by_run[r], r))
        keep, rest = runs[:len(svg.RUN_COLORS) - 1], runs[len(svg.RUN_COLORS) - 1:]
        cell: dict[tuple, list] = {}
        for day, run, gs, cost in d.rerun_daily:
            key = (day, run if run in keep else "other runs")
            acc = cell.setdefault(key, [0.0, Decimal(0)])
            acc[0] += gs
            acc[1] += cost
        series = []
        for i, run in enumerate(keep + (["other runs"] if rest else [])):
            vals = [cell.get((day, run), [0.0, Decimal(0)]) for day in days]
            series.append(svg.Series(run, svg.RUN_COLORS[i], [float(v[1]) for v in vals],
                                     [f"{day} · {run}: {money(v[1], d.currency)} ({gpu_hours(v[0])} GPU-hours)"
                                      for day, v in zip(days, vals)]))
        totals = [money_short(sum((s.values[i] for s in series), 0.0), d.currency) for i in range(len(days))]
        labels = [day.strftime("%a %d %b") if len(days) <= 10 else day.strftime("%d %b") for day in days]
        chart = svg.stacked_bars(labels, series, totals, y_format=lambda v: money_short(v, d.currency),
                                 label="Rerun loss per run and day",
                                 height=260, highlight=days.index(d.end) if d.start == d.end and d.end in days else None)
    return ("<section><h2>Work lost to interruptions, per run</h2>"
            f"<p class=\"note\">{esc(trend_text(d))} Cost of compute since the last checkpoint before each crash plus "
            "the restart until training resumed. Frequent bars mean checkpoint more often or fix the failing nodes.</p>"
            f"{chart}</section>")


# the badput kinds of a run (docs/ledger.md#the-badput-of-a-run) in the chart's stacking order, with labels
BADPUT_KINDS = (("disruption", "Lost to interruptions"), ("failed", "Failed"), ("idle", "Idle (hung)"),
                ("unmonitored", "Unmonitored"), ("startup", "Startup"), ("checkpoint_save", "Blocking checkpoint saves"),
                ("evaluation", "Evaluation"), ("data_wait", "Waiting for data"),
                ("exposed_communication", "Exposed communication"))


def badput_chart(d: ReportData) -> str:
    """Each run's badput in money, a bar per run stacked by kind (goodput left out of the bar, in the tip)."""
    c = d.currency
    cost: dict[tuple[str, str], tuple[Decimal, float]] = {(run, kind): (e, s) for run, kind, e, s in d.run_badput}
    runs = sorted({run for run, _ in cost},
                  key=lambda r: (-sum(v[0] for (run, k), v in cost.items() if run == r and k != "goodput"), r))[:12]
    if not runs:
        return ""
    def share(run: str, kind: str) -> str:
        total = sum(v[1] for (r, _), v in cost.items() if r == run)
        return pct(cost.get((run, kind), (0, 0.0))[1], total)
    series = []
    for i, (kind, label) in enumerate(BADPUT_KINDS):
        values = [cost.get((run, kind), (Decimal(0), 0.0)) for run in runs]
        if not any(v[0] for v in values):
            continue
        series.append(svg.Series(label, svg.RUN_COLORS[i % len(svg.RUN_COLORS)], [float(v[0]) for v in values],
                                 [f"{run} · {label}: {money(v[0], c)} ({gpu_hours(v[1])} GPU-hours, "
                                  f"{share(run, kind)} of the run's GPU time; goodput {share(run, 'goodput')})"
                                  for run, v in zip(runs, values)]))
    if not series:
        chart = svg.empty(1180, 90, "The runs lost nothing to badput in this period.")
    else:
        totals = [money_short(sum((s.values[i] for s in series), 0.0), c) for i in range(len(runs))]
        chart = svg.stacked_bars(runs, series, totals, y_format=lambda v: money_short(v, c),
                                 label="Badput per run by kind", height=280)
    return ("<section data-section=\"badput\"><h2>Where each run's GPU time went besides training</h2>"
            "<p class=\"note\">The cost of every GPU-second of a run's jobs that was not goodput: crashes (work "
            "lost and restarts), failed and idle jobs, time without telemetry, and within productive time the "
            "startup, blocking checkpoint saves, evaluations, data waits and exposed communication its trainer "
            "logged. Hover a bar for its GPU-hours and the run's goodput.</p>"
            f"{chart}</section>")


def mfu_chart(d: ReportData) -> str:
    runs, c = d.runs[:12], d.currency
    if not runs:
        chart = svg.empty(1180, 90, "The team ran no training runs with trainer events in this period.")
    else:
        bars = []
        for r in runs:
            mfu_tip = (f"{r.run_id}: effective MFU {ratio_pct(r.effective_mfu)}, trainer-reported MFU "
                       f"{ratio_pct(r.mfu)}, target {ratio_pct(r.mfu_target, 0)}")
            cost_tip = (f"{r.run_id}: {money(r.cost_per_mtok, c)} per 1M tokens kept; at the target MFU it would be "
                        f"{money(r.cost_per_mtok_at_target, c)}")
            bars.append(svg.RunBar(
                r.run_id, r.effective_mfu,
                float(r.cost_per_mtok) if r.cost_per_mtok is not None else None,
                float(r.cost_per_mtok_at_target) if r.cost_per_mtok_at_target is not None else None,
                mfu_tip, cost_tip, ratio_pct(r.effective_mfu), money(r.cost_per_mtok, c),
                f"(at target {money(r.cost_per_mtok_at_target, c)})" if r.cost_per_mtok_at_target is not None else "",
                "billed in several currencies: no cost per token" if r.currencies > 1 else "no tokens kept"))
        chart = svg.run_efficiency(bars, d.mfu_target, label="MFU and cost per 1M tokens per run",
                                   cost_format=lambda v: money_short(v, c))
    more = f" The {len(runs)} most expensive of {len(d.runs)} runs." if len(d.runs) > len(runs) else ""
    return ("<section><h2>Training efficiency per run</h2>"
            "<p class=\"note\">Left: effective MFU over all the run's GPU time, amber below the target (dashed red line), "
            "green at or above it. "
            f"Right: cost per 1M tokens kept, the black tick what it would cost at the target MFU.{esc(more)}</p>"
            f"{chart}</section>")


def storage_chart(d: ReportData) -> str:
    """The team's inventoried bytes per day of the trend, stacked by kind: how fast its storage grows."""
    s = d.storage
    days = days_of(d)
    cell = {(day, kind): b for day, kind, b in s.daily}
    kinds = [k for k in storage.KIND_COLOURS if any(kind == k for _, kind, _ in s.daily)]
    series = [svg.Series(k, storage.KIND_COLOURS[k], [cell.get((day, k), 0.0) / 1e12 for day in days],
                         [f"{day}: {k} {storage.terabytes(cell.get((day, k), 0.0))}" for day in days]) for k in kinds]
    totals = [storage.terabytes(sum(cell.get((day, k), 0.0) for k in kinds)) for day in days]
    labels = [day.strftime("%a %d %b") if len(days) <= 10 else day.strftime("%d %b") for day in days]
    chart = svg.stacked_bars(labels, series, totals, y_format=lambda v: f"{v:,.0f} TB" if v >= 10 else f"{v:,.1f} TB",
                             label="Inventoried storage per day by kind", height=250)
    return f"<h3>Stored per day</h3><p class=\"note\">{esc(trend_text(d))}</p>{chart}"
