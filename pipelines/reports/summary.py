"""The words both the HTML and the Markdown report use: category names and colours, the period, and
the one-sentence summary a team lead reads first. Plain text; each renderer escapes it for its format."""

from __future__ import annotations

from decimal import Decimal

from models import ledger_categories
from pipelines.reports.data import WASTE_KINDS, WASTE_LABELS, Report, ReportData, RunBudget, RunEfficiency, Scope
from pipelines.reports.fmt import currency_list, gpu_hours, money, pct, plain_decimal
from pipelines.reports.fx import Converted

# Ledger categories in the charts' stacking order, with their labels and colours (models/ledger_categories.py).
CATEGORY_STYLE = tuple((c.name, c.label, c.colour) for c in ledger_categories.CATEGORIES)
_STYLE = {c: (label, color) for c, label, color in CATEGORY_STYLE}


def category_style(category: str) -> tuple[str, str]:
    """(label, colour); a category this code does not know yet still shows, under its own name."""
    return _STYLE.get(category, (category, "#4a5568"))


def period_text(d: Scope) -> str:
    if d.start == d.end:
        return d.start.strftime("%A %d %B %Y")
    if d.start.day == 1 and d.label == f"{d.start.year:04d}-{d.start.month:02d}":
        return d.start.strftime("%B %Y")
    return f"{d.start} to {d.end}"


def trend_text(d: Scope) -> str:
    if d.start == d.end:
        return (f"The 7 days ending {d.end} ({d.trend_start} to {d.trend_end}), so the report day "
                "(highlighted) shows against its trend.")
    return f"Every day of the period ({d.trend_start} to {d.trend_end})."


def biggest_contributor(d: ReportData, kind: str) -> str:
    """The single job, interruption or node that cost the most of this kind of waste."""
    if kind in ("allocated_idle", "failed_job", "unmonitored") and d.jobs[kind]:
        j = d.jobs[kind][0]
        name = f" {j.job_name}" if j.job_name else ""
        return f"job {j.job_id}{name} ({j.user_name or 'unknown user'}): {money(j.waste_cost, d.currency)}"
    if kind == "rerun_loss" and d.interruptions:
        i = d.interruptions[0]
        return f"{i.run_id or 'run unknown'}, job {i.job_id or '?'} ({i.cause or i.state or 'interrupted'}): {money(i.effective_cost, d.currency)}"
    if kind == "idle_unallocated" and d.idle_nodes:
        host, _, unalloc, _, _ = max(d.idle_nodes, key=lambda n: (n[2], n[0]))
        if unalloc > 0:
            return f"node {host}: {gpu_hours(unalloc)} GPU-hours with no job"
    if kind in WASTE_KINDS and d.cost(kind):
        return "–"
    return ""


def summary_sentence(d: ReportData) -> str:
    """e.g. "pretrain spent $12,345.67 ... The biggest waste was idle GPUs, no job: $1,234.56 (node east-gpu-005 ...)."""
    period = "on " + d.start.isoformat() if d.start == d.end else f"in {period_text(d)}"
    if not d.gpu_cost and not d.waste_cost:
        # e.g. a currency only storage was billed in: a waste share of nothing says nothing
        return f"Team {d.team} spent {money(d.total_cost, d.currency)} {period}, none of it on GPUs."
    c = d.currency
    text = (f"Team {d.team} spent {money(d.total_cost, c)} {period}, {money(d.gpu_cost, c)} of it on GPUs. "
            f"{money(d.waste_cost, c)} of the GPU cost ({pct(d.waste_cost, d.gpu_cost)}) bought no training progress")
    worst = max(WASTE_KINDS, key=lambda k: (d.cost(k), -WASTE_KINDS.index(k)))
    if d.cost(worst) > Decimal(0):
        who = biggest_contributor(d, worst)
        text += (f"; the biggest part was {_sentence_case(WASTE_LABELS[worst])}, {money(d.cost(worst), d.currency)}"
                 + (f" (largest: {who})" if who and who != "–" else ""))
    return text + "."


def meanings(d: Report) -> list[tuple[str, str]]:
    """What each line of the report means, one sentence each from models/ledger_categories.py: every
    waste kind and productive GPU time, every other category the team has cost in, and _unallocated
    where the team's ledger names it (as its team or a project)."""
    present = {row[3] for row in d.ledger}
    shown = [c for c in ledger_categories.CATEGORIES if c.is_gpu or c.name in present]
    out = [(c.label, c.help) for c in shown]
    if any(ledger_categories.UNALLOCATED in (row[1], row[2]) for row in d.ledger):
        out.append((f"{ledger_categories.UNALLOCATED} (team or project)", ledger_categories.UNALLOCATED_HELP))
    return out


def team_note(d: Scope) -> str:
    """Said first in the report of _unallocated, which is no team; empty for a team."""
    return ledger_categories.UNALLOCATED_HELP if d.team == ledger_categories.UNALLOCATED else ""


def coverage_text(d: Report) -> str:
    """Says so when the ledger has only some days of the period (a month in progress, days not run yet)."""
    days = sorted({row[0] for row in d.ledger})
    span = (d.end - d.start).days + 1
    if not days or len(days) == span:
        return ""
    return (f"The ledger has {len(days)} of the period's {span} days ({days[0]} to {days[-1]}); "
            "the other days have no cost rows for this team.")


def money_in(d: Report) -> str:
    """What the report's money is in: "USD", "EUR and USD"."""
    return currency_list(d.currencies) if d.currencies else "the currency it was billed in"


def currencies_text(d: Report) -> str:
    """For a team billed in several currencies: why the report has a section per currency."""
    return (f"Team {d.team}'s costs were billed in {len(d.currencies)} currencies, {currency_list(d.currencies)}. "
            "Each has its own section below with its own totals; amounts in different currencies are never added. "
            "GPU time, tokens and MFU are not money: a job, node or run billed in several currencies shows all of "
            "its GPU time beside the part of its cost billed in that section's currency, and the team's MFU is "
            "over all of its runs.")


def cost_per_mtok_text(r: RunEfficiency, currency: str) -> str:
    """A run's cost per 1M tokens kept; a run billed in several currencies has none, since it would
    add its cost in two currencies."""
    if r.cost_per_mtok is not None:
        return money(r.cost_per_mtok, currency)
    return "– (several currencies)" if r.currencies > 1 else "–"


def rate_text(c: Converted) -> str:
    """How a currency's amounts were converted: "1.08 USD per EUR in 2026-11 (ECB monthly average)",
    "no rate to USD for NOK in 2026-11", or "the reporting currency"."""
    r = c.reporting_currency
    if c.missing_months:
        return f"no rate to {r} for {c.currency} in {', '.join(c.missing_months)}"
    if c.currency == r:
        return "the reporting currency"
    return "; ".join(f"{plain_decimal(rate.rate.normalize())} {r} per {c.currency} in {rate.month} ({rate.source})"
                     for rate in c.rates)


def converted_total_text(d: ReportData) -> str:
    """The section's total in the reporting currency, for its headline: "= $790.93 at 1.08 USD per EUR
    in 2026-11 (ECB monthly average)"; empty without `fx:` rates or in the reporting currency itself."""
    c = d.reporting
    if c is None or c.currency == c.reporting_currency:
        return ""
    if c.total_reporting is None:
        return f"{rate_text(c)}: not converted"
    return f"= {money(c.total_reporting, c.reporting_currency)} at {rate_text(c)}"


def reporting_table(d: Report) -> tuple[str, list[str], list[list[str]]]:
    """Every currency's total and waste beside the same in the reporting currency, and their sum there:
    the title, headers and rows (plain text). The sum never adds an amount that has no rate: it is
    named after the converted sum instead ("$1,661.69 + 1,234.50 NOK (no rate)")."""
    t = d.reporting
    r = t.reporting_currency

    def converted(value: Decimal | None) -> str:
        return "no rate" if value is None else money(value, r)

    def grand(added: Decimal, missing: list[tuple[str, Decimal]]) -> str:
        return " + ".join([money(added, r)] + [f"{money(v, c)} (no rate)" for c, v in missing])

    # a waste of zero is zero in any currency, rate or not
    rows = [[c.currency, money(c.total, c.currency), money(c.waste, c.currency), rate_text(c),
             converted(c.total_reporting), converted(c.waste_reporting) if c.waste else money(Decimal(0), r)]
            for c in t.by_currency.values()]
    rows.append([f"all, in {r}", "", "", "", grand(*t.total), grand(*t.waste)])
    return (f"Totals in {r}", ["billed in", "total cost", "waste", "rate", f"total in {r}", f"waste in {r}"], rows)


def plan_table(budgets: list[RunBudget], c: str) -> tuple[list[str], list[list[str]]]:
    """Plan against actual of planned runs in currency `c`: headers and rows, plain text (docs/plans.md)."""
    headers = ["run", "GPU-hours used / budget", "burn", "tokens done", "cost to date", "budget",
               "projected GPU-hours", "projected cost", "projected overrun"]

    def hours(v: float | None) -> str:
        return "–" if v is None else f"{v:,.1f}"

    rows = [[b.run_id + f" (as of {b.as_of})", f"{hours(b.gpu_hours_to_date)} / {hours(b.budget_gpu_hours)}",
             "–" if b.burn_pct is None else f"{b.burn_pct:.1f} %", f"{b.progress_pct:.1f} %",
             money(b.cost_to_date, c) if b.cost_to_date is not None else "–",
             money(b.budget_cost, c) if b.budget_cost is not None else "–",
             hours(b.projected_gpu_hours), money(b.projected_cost, c) if b.projected_cost is not None else "–",
             "–" if b.projected_overrun_gpu_hours is None else
             (f"{b.projected_overrun_gpu_hours:+,.1f} GPU-h" + (f", {money(b.projected_overrun_cost, c)}"
                                                                 if b.projected_overrun_cost is not None else ""))]
            for b in budgets]
    return headers, rows


def _sentence_case(label: str) -> str:
    """A label inside a sentence: "Idle GPUs, no job" -> "idle GPUs, no job" (GPU stays GPU)."""
    return label[:1].lower() + label[1:]
