"""The HTML waste report: headline numbers first, then charts (pipelines/reports/html_charts.py), then the
tables to act on.

One self-contained file: inline CSS and SVG, no script, no URL. A team billed in one currency gets one
run of sections; a team billed in several gets them once per currency, each under "Billed in EUR",
since amounts in two currencies are never added. Everything from input is escaped with
`esc` where it is written (see fmt); numbers and fixed words are escaped too, so there is no path by
which an unescaped string reaches the page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from pipelines.reports import html_charts, savings, storage, underuse
from pipelines.reports.data import GPU_CATEGORIES, WASTE_HELP, WASTE_KINDS, WASTE_LABELS, Report, ReportData, RunBudget
from pipelines.reports.fmt import esc, gpu_hours, money, pct, ratio_pct, tokens, when
from pipelines.reports.summary import (biggest_contributor, category_style, converted_total_text,
                                       cost_per_mtok_text, coverage_text, currencies_text, meanings, money_in,
                                       period_text, plan_table, reporting_table, summary_sentence, team_note)

CSS = """
:root { --ink:#1f2933; --muted:#616e7c; --line:#e4e7eb; --waste:#c53030; --bg:#f7f8fa; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
       font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Liberation Sans', sans-serif; }
main { max-width: 1260px; margin: 0 auto; padding: 28px 32px 48px; }
header .eyebrow { color:var(--muted); font-size:12px; letter-spacing:.06em; text-transform:uppercase; }
h1 { font-size: 26px; margin: 4px 0 6px; }
h2 { font-size: 18px; margin: 0 0 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.sub, .note { color: var(--muted); margin: 0 0 10px; }
.summary { font-size: 16px; margin: 14px 0 18px; max-width: 1000px; }
section { background:#fff; border:1px solid var(--line); border-radius:10px; padding:18px 22px; margin:16px 0; }
.kpis { display:grid; grid-template-columns: repeat(4, 1fr); gap:14px; background:none; border:0; padding:0; }
.kpi { background:#fff; border:1px solid var(--line); border-radius:10px; padding:14px 18px; }
.kpi .k { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.05em; }
.kpi .v { font-size:28px; font-weight:700; margin:2px 0; font-variant-numeric: tabular-nums; }
.kpi .d { color:var(--muted); font-size:13px; }
.kpi .d.fx { color:var(--ink); margin-top:4px; }
.kpi.waste { border-left: 5px solid var(--waste); }
.kpi.waste .v { color: var(--waste); }
.kpi.warn .v { color: #b7791f; }
table { border-collapse: collapse; width:100%; font-variant-numeric: tabular-nums; }
th { text-align:left; font-size:12px; color:var(--muted); font-weight:600; border-bottom:2px solid var(--line);
     padding:6px 8px; }   /* headers wrap between words, so a table of many columns fits the page */
td { border-bottom:1px solid var(--line); padding:6px 8px; vertical-align:top; white-space:nowrap; }
td.n { white-space:nowrap; } td.n, th.n { text-align:right; }
td.id { font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size:12.5px; white-space:nowrap; }
td.name, td.wrap { white-space:normal; max-width: 320px; overflow-wrap:anywhere; }
tr.zero td { color:#9aa5b1; }
tr.zero td.waste { color:#9aa5b1; font-weight:normal; }
td.waste { color: var(--waste); font-weight:600; }
td.total { font-weight:700; }
.nw { white-space:nowrap; }
.bar { background:#f1f3f5; border-radius:3px; height:14px; width:220px; }
.bar > div { height:14px; border-radius:3px; }
.kind { font-weight:600; }
.help { color:var(--muted); font-size:12.5px; }
.swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:6px; }
.empty { color: var(--muted); font-style: italic; }
.scroll { overflow-x:auto; }
td.wrap { min-width: 160px; }
td.meaning { min-width: 260px; max-width: 420px; }
td.action { font-weight: 600; }  /* a waste line's name and its sentence */
td.action .help { font-weight: normal; }  /* an alert's message beneath its subject */
@media (max-width: 1100px) {             /* a narrow window: bars shorter, two cards a row, tighter tables */
  main { padding: 20px 14px 40px; } .bar { width: 90px; } .kpis { grid-template-columns: repeat(2, 1fr); }
  table { font-size: 13px; } th, td { padding: 5px 5px; } td.when, td.brk { white-space: normal; }
  td.wrap { min-width: 80px; } td.meaning { min-width: 220px; } td.id { font-size: 12px; }
}
svg.chart { display:block; max-width:100%; height:auto; margin-top:8px; }
h2.billed { font-size: 22px; margin: 36px 0 10px; padding-bottom: 6px; border-bottom: 3px solid var(--ink); }
nav.links { margin: -4px 0 10px; } nav.links a { color: #2b6cb0; }
footer { color:var(--muted); font-size:12.5px; margin-top:24px; }
footer dt { font-weight:600; color:var(--ink); } footer dd { margin:0 0 6px 0; }
"""


def render(r: Report, nav: Sequence[tuple[str, str]] = ()) -> str:
    """`nav`: (text, href) links under the heading, for a served page (a report file has none)."""
    title = f"GPU cost and waste: {r.team}, {r.label}"
    coverage = f'<p class="note">{esc(coverage_text(r))}</p>' if coverage_text(r) else ""
    note = f'<p class="summary" data-note="team">{esc(team_note(r))}</p>' if team_note(r) else ""
    if not r.has_data:
        body = _no_data(r)
    elif len(r.sections) == 1:
        body = _currency_body(r.sections[0], coverage) + _footer(r)
    else:
        body = (f'<p class="summary">{esc(currencies_text(r))}</p>{coverage}{_reporting_totals(r)}'
                + "".join(f'<div class="currency" data-currency="{esc(d.currency)}">'
                          f'<h2 class="billed">Billed in {esc(d.currency)}</h2>{_currency_body(d, "")}</div>'
                          for d in r.sections)
                + _footer(r))
    return page(title, f"Team {r.team} · {period_text(r)}", note + what_to_do(r.savings, f"team {r.team}") + body,
                f"Days and times in UTC · money in {money_in(r)}, effective cost (after discounts and credits)"
                " · hover a bar or cell for its exact value", nav=nav)


def page(title: str, heading: str, body: str, sub: str = "Days and times in UTC · effective cost",
         nav: Sequence[tuple[str, str]] = ()) -> str:
    """A whole report page around `body` (HTML already escaped); title, heading and sub are text; `nav`
    (text, href) links go under the heading (the served pages' links to each other)."""
    anchors = " · ".join(f'<a href="{esc(href)}">{esc(text)}</a>' for text, href in nav)
    links = f'<nav class="links">{anchors}</nav>' if nav else ""
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            # No script runs and nothing loads: a job name that slips past escaping still cannot act.
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>"
            "<header><div class=\"eyebrow\">gpuledger &middot; GPU cost &amp; waste report</div>"
            f"<h1>{esc(heading)}</h1><p class=\"sub\">{esc(sub)}</p>{links}</header>"
            f"{body}</main></body></html>\n")


def what_to_do(s: savings.Savings | None, who: str, heading: str = "What to do",
               limit: int | None = savings.SHOWN) -> str:
    """The savings opportunities, largest first (savings.py): first on a team's page, the first `limit`
    of them (None: all, as the served /savings page shows them); one line without any."""
    if s is None:
        return ""
    cells = [[("wrap action", a), ("wrap", e), ("n", w), ("n", m)] for a, e, w, m in savings.rows(s, limit)]
    rest = savings.rest_text(s, limit) if limit is not None else ""
    return (f'<section data-section="what-to-do"><h2>{esc(heading)}</h2><p class="note">{esc(savings.intro(s, who))}</p>'
            + (table([(h, i > 1) for i, h in enumerate(savings.HEADERS)], cells, "") if cells else "")
            + (f'<p class="note">{esc(rest)}</p>' if rest else "") + "</section>")


def _currency_body(d: ReportData, coverage: str) -> str:
    """Everything the report says about one currency's money, headline first."""
    return "".join([_headline(d, coverage), _waste_table(d), html_charts.cost_chart(d), html_charts.idle_heatmap(d),
                    html_charts.rerun_chart(d), html_charts.badput_chart(d), html_charts.mfu_chart(d), _job_tables(d),
                    _underuse(d), _interruptions(d), _idle_nodes(d), _runs(d), _storage(d)])


def _no_data(d: Report) -> str:
    span = (f"The warehouse holds days {esc(when(d.data_first_day))} to {esc(when(d.data_last_day))}."
            if d.data_first_day else "The warehouse holds no cost rows yet.")
    return (f"<section><h2>No cost recorded</h2><p>The ledger has no rows for team <b>{esc(d.team)}</b> "
            f"from {esc(when(d.start))} to {esc(when(d.end))}. {span}</p>"
            "<p class=\"note\">Either the team used nothing in this period, its days have not been run yet, "
            "or the team name is spelled differently in the ledger.</p></section>")


def _headline(d: ReportData, coverage: str) -> str:
    c = d.currency
    gpu_s = sum(d.gpu_seconds(k) for k in GPU_CATEGORIES)
    # data-kpi names each number for tools (and the tests) that read the page, data-currency its currency.
    converted = converted_total_text(d)
    cards = [
        ("total_cost", "Total cost", money(d.total_cost, c), "all of it: GPUs, storage, network, shared, tax, credits", ""),
        ("gpu_cost", "GPU cost", money(d.gpu_cost, c), f"{gpu_hours(gpu_s)} GPU-hours billed", ""),
        ("waste_cost", "Waste", money(d.waste_cost, c),
         f"{pct(d.waste_cost, d.gpu_cost)} of GPU cost · {gpu_hours(d.waste_gpu_seconds)} GPU-hours", "waste"),
        ("low_activity_cost", "Busy but under-used", money(d.low_activity_cost, c),
         f"{pct(d.low_activity_cost, d.cost('productive'))} of productive cost at low SM activity",
         "warn" if d.low_activity_cost else ""),
    ]
    if d.team_effective_mfu is None:
        cards.append(("effective_mfu", "Effective MFU", "–", "no run logged tokens in this period", ""))
    elif not d.runs:
        # MFU has no currency; beside money in one where the team ran nothing it would read as this money's
        cards.append(("effective_mfu", "Effective MFU", "–", f"no training run billed in {c}", ""))
    else:
        below = d.mfu_target is not None and d.team_effective_mfu < d.mfu_target
        gap = f" · below target cost {money(d.mfu_gap_cost, c)}" if d.mfu_gap_cost is not None and below else ""
        cards.append(("effective_mfu", "Effective MFU", ratio_pct(d.team_effective_mfu),
                      f"target {ratio_pct(d.mfu_target, 0)} · trainer MFU {ratio_pct(d.team_mfu)}{gap}",
                      "warn" if below else ""))
    # the total in the reporting currency, on a line of its own under the total's card
    extra = {"total_cost": f'<div class="d fx" data-kpi="total_cost_reporting">{esc(converted)}</div>' if converted else ""}
    html = "".join(f'<div class="kpi {cls}" data-currency="{esc(c)}" data-kpi="{key}"><div class="k">{esc(k)}</div><div class="v">{esc(v)}</div>'
                   f'<div class="d">{esc(t)}</div>{extra.get(key, "")}</div>' for key, k, v, t, cls in cards)
    return f'<p class="summary">{esc(summary_sentence(d))}</p>{coverage}<div class="kpis">{html}</div>'


def _reporting_totals(r: Report) -> str:
    """A report billed in several currencies, with `fx:` rates: each currency's total and waste in the
    reporting currency, and their sum there (nothing without a rate is added)."""
    if r.reporting is None:
        return ""
    title, headers, rows = reporting_table(r)
    last = len(rows) - 1  # the sum over currencies, in bold
    cells = [[(("wrap" if i == 3 else "" if i == 0 else "n") + (" total" if n == last else ""), text)
              for i, text in enumerate(row)] for n, row in enumerate(rows)]
    totals = table([(h, i not in (0, 3)) for i, h in enumerate(headers)], cells, "")
    return (f'<section data-kpi="reporting_totals"><h2>{esc(title)}</h2><p class="note">Each currency\'s money '
            "converted at the config's exchange rate (fx:) for its month, exactly, and rounded once here; "
            "a currency without a rate is not converted and never added to the others.</p>"
            f"{totals}</section>")


def _waste_table(d: ReportData) -> str:
    kinds = sorted(WASTE_KINDS, key=lambda k: (-d.cost(k), WASTE_KINDS.index(k)))
    top = max((d.cost(k) for k in kinds), default=Decimal(0)) or Decimal(1)
    rows = []
    for k in kinds:
        width = max(Decimal(0), d.cost(k) / top * 100)
        style = category_style(k)
        rows.append(
            f'<tr class="{"zero" if not d.cost(k) else ""}" data-kind="{esc(k)}"><td class="wrap meaning"><span class="kind"><span class="swatch" style="background:{esc(style[1])}"></span>'
            f'{esc(WASTE_LABELS[k])}</span><div class="help">{esc(WASTE_HELP[k])}</div></td>'
            f'<td><div class="bar"><div style="width:{width:.1f}%;background:{esc(style[1])}"></div></div></td>'
            f'<td class="n waste">{esc(money(d.cost(k), d.currency))}</td><td class="n">{esc(pct(d.cost(k), d.gpu_cost))}</td>'
            f'<td class="n">{esc(gpu_hours(d.gpu_seconds(k)))}</td><td class="wrap">{esc(biggest_contributor(d, k))}</td></tr>')
    return ("<section><h2>Where the waste went</h2><p class=\"note\">Largest first. Share of the team's GPU cost "
            f"({esc(money(d.gpu_cost, d.currency))}); productive GPU time cost "
            f"{esc(money(d.cost('productive'), d.currency))}.</p>"
            "<table><thead><tr><th>kind of waste</th><th></th><th class=\"n\">cost</th><th class=\"n\">% of GPU cost</th>"
            f"<th class=\"n\">{_header('GPU-hours')}</th><th>biggest contributor</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></section>")


def table(headers: Sequence[tuple[str, bool]], rows: list[list[tuple]], empty: str) -> str:
    """headers: (title, numeric); a cell: (css class, text), or (css class, text, note) with a line of
    help beneath the text (an alert's message under its subject); all text is escaped here."""
    if not rows:
        return f'<p class="empty">{esc(empty)}</p>'
    head = "".join(f'<th class="{"n" if numeric else ""}">{_header(h)}</th>' for h, numeric in headers)
    body = "".join("<tr>" + "".join(f'<td class="{esc(cell[0])}">{_cell_text(cell[0], cell[1])}'
                                    + (f'<div class="help">{esc(cell[2])}</div>' if len(cell) > 2 else "") + "</td>"
                                    for cell in row)
                   + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _header(text: str) -> str:
    """A column header, escaped: it wraps between words, never inside the unit "GPU-hours" (U+2011)."""
    return esc(text).replace("GPU-", "GPU\u2011")


def _cell_text(cls: str, text: str) -> str:
    """A cell's escaped text; a "brk" cell ("3,247.1 / 3,171.8", "+75.3 GPU-h, $4,910.21") may break
    only after its "/ " or ", ", never inside an amount or at the hyphen of "GPU-h"."""
    if "brk" not in cls.split():
        return esc(text)
    return " ".join(f'<span class="nw">{esc(part)}</span>' for part in re.split(r"(?<=[/,]) ", text))


def _job_tables(d: ReportData) -> str:
    headers = [("job", False), ("name", False), ("user", False), ("project", False), ("state", False),
               ("wasted GPU-hours", True), ("waste cost", True), ("job cost", True)]
    parts = ["<section><h2>Jobs to look at</h2><p class=\"note\">The most expensive waste per job. A job's waste "
             "cost is its cost times the wasted share of its GPU time.</p>"]
    for kind, title, empty in (("allocated_idle", "Hung or idle jobs (GPUs held at 0 % activity)", "No hung or idle jobs."),
                               ("failed_job", "Failed jobs nothing resumed", "No failed jobs.")):
        rows = [[("id", f"{j.job_id} ({j.cluster})" if j.cluster else j.job_id), ("name", j.job_name or "–"),
                 ("", j.user_name or "–"), ("", j.project or "–"), ("", j.state or "–"),
                 ("n", gpu_hours(j.waste_gpu_seconds)), ("n waste", money(j.waste_cost, d.currency)),
                 ("n", money(j.effective_cost, d.currency))]
                for j in d.jobs[kind]]
        parts.append(f"<h3>{esc(title)}</h3>" + table(headers, rows, empty))
    return "".join(parts) + "</section>"


def _underuse(d: ReportData) -> str:
    """Busy but under-used: the jobs and the users, worst first (underuse.py)."""
    c = d.currency
    jobs = [[("id wrap", row[0])] + [("", v) for v in row[1:3]] + [("n", v) for v in row[3:6]] + [("", row[6])]
            + [("n", v) for v in row[7:]] for row in underuse.job_rows(d.underused_jobs, c)]
    users = [[("", row[0])] + [("n", v) for v in row[1:]] for row in underuse.user_rows(d.users, c)]
    return (f'<section data-section="underuse"><h2>Busy but under-used</h2><p class="note">{esc(underuse.NOTE)}</p>'
            "<h3>Jobs</h3>"
            + table([(h, i >= 3 and i != 6) for i, h in enumerate(underuse.JOB_HEADERS)], jobs,
                     "No job ran at low activity, held GPUs it never used or fits a smaller GPU.")
            + "<h3>Users</h3>"
            + table([(h, i > 0) for i, h in enumerate(underuse.USER_HEADERS)], users, "No user cost in this period.")
            + "</section>")


def _interruptions(d: ReportData) -> str:
    headers = [("run", False), ("interrupted job", False), ("name", False), ("user", False), ("state, exit code", False),
               ("interrupted at", False), ("last checkpoint", False), ("lost GPU-h", True), ("restart GPU-h", True),
               ("cost", True)]
    rows = [[("id", i.run_id or "–"), ("id", i.job_id or "–"), ("name", i.job_name or "–"), ("", i.user_name or "–"),
             ("", i.cause or i.state or "–"), ("when", when(i.interrupted_at)),
             ("when", when(i.last_checkpoint_at) if i.last_checkpoint_at else ("none (whole job, estimate)" if i.is_estimate else "–")),
             ("n", gpu_hours(i.lost_gpu_seconds)), ("n", gpu_hours(i.restart_gpu_seconds)),
             ("n waste", money(i.effective_cost, d.currency))] for i in d.interruptions]
    return ("<section><h2>Work lost to interruptions</h2><p class=\"note\">Each crash that a later job resumed "
            "from a checkpoint, most expensive first.</p>"
            + table(headers, rows, "No interruptions in this period.") + "</section>")


def _idle_nodes(d: ReportData) -> str:
    headers = [("node", False), ("days", True), ("idle, no job GPU-h", True), ("hung jobs GPU-h", True),
               ("idle cost", True)]
    rows = [[("id", host), ("n", str(days)), ("n", gpu_hours(unalloc)), ("n", gpu_hours(alloc)),
             ("n waste", money(cost, d.currency))]
            for host, days, unalloc, alloc, cost in d.idle_nodes]
    return ("<section><h2>Idle nodes</h2><p class=\"note\">Nodes where the team paid for idle GPUs, most expensive first.</p>"
            + table(headers, rows, "No idle nodes in this period.") + "</section>")


def _runs(d: ReportData) -> str:
    c = d.currency
    headers = [("run", False), ("project", False), ("GPU", False), ("tokens kept", True), ("trainer MFU", True),
               ("effective MFU", True), ("goodput", True), ("cost", True), ("per 1M tokens", True),
               ("at target MFU", True), ("below-target cost", True)]
    rows = [[("id", r.run_id), ("", r.project or "–"), ("wrap", f"{r.gpu_model or '–'} {r.dtype or ''}".strip()),
             ("n", tokens(r.tokens_kept)), ("n", ratio_pct(r.mfu)), ("n", ratio_pct(r.effective_mfu)),
             ("n", ratio_pct(r.goodput)), ("n", money(r.effective_cost, c)),
             ("n", cost_per_mtok_text(r, c)),
             ("n", money(r.cost_per_mtok_at_target, c) if r.cost_per_mtok_at_target is not None else "–"),
             ("n", money(r.mfu_gap_cost, c) if r.mfu_gap_cost is not None else "–")] for r in d.runs]
    return ("<section><h2>Training runs</h2><p class=\"note\">Goodput: productive share of the run's GPU time. "
            "Below-target cost: what the run paid for running under the MFU target (negative when above it).</p>"
            + table(headers, rows, "No training runs in this period.") + "</section>" + plan_against_actual(d.run_budgets, d.currency))


def _storage(d: ReportData) -> str:
    """Inventoried storage (storage.py): by kind and tier, its growth, the runs' checkpoints, the policy."""
    s, c = d.storage, d.currency
    if s is None:
        return ""
    kinds = [[("", k), ("", t), ("n", b), ("n", g), ("n", m), ("", p)] for k, t, b, g, m, p in storage.kind_tier_rows(s, c)]
    runs = [[("id", r), ("n", b), ("when", w), ("wrap", st), ("n", m)] for r, b, w, st, m in storage.run_rows(s, c)]
    return (f'<section data-section="storage"><h2>Storage</h2><p class="note">{esc(storage.NOTE)}</p>'
            + table([(h, i in (2, 3, 4)) for i, h in enumerate(storage.KIND_TIER_HEADERS)], kinds, "")
            + html_charts.storage_chart(d)
            + "<h3>Runs' checkpoints</h3>"
            + table([(h, i in (1, 4)) for i, h in enumerate(storage.RUN_HEADERS)], runs,
                    "No run's checkpoints are inventoried.")
            + f'<p class="note" data-kpi="storage_policy">{esc(storage.policy_text(s, c))}</p></section>')


def plan_against_actual(budgets: list[RunBudget], currency: str) -> str:
    """The planned runs' plan against actual (marts.fct_run_budget_daily); nothing without a plan. The
    team report's section, and a run's page's."""
    if not budgets:
        return ""
    headers, rows = plan_table(budgets, currency)
    cells = []
    for b, row in zip(budgets, rows):
        # over budget (burn past 100 %) or heading over it (a projected overrun): in the waste colour
        over = {2} if b.burn_pct is not None and b.burn_pct > 100 else set()
        over |= {8} if b.projected_overrun_gpu_hours is not None and b.projected_overrun_gpu_hours > 0 else set()
        # "used / budget" and "GPU-h, cost" may break at their spaces in a narrow window
        cells.append([("id wrap" if i == 0 else ("n waste" if i in over else "n") + (" brk" if i in (1, 8) else ""), text)
                      for i, text in enumerate(row)])
    return ("<section><h2>Plan against actual</h2><p class=\"note\">Runs with a plan (plans/*.yaml): GPU-hours "
            "and cost so far against the budget, the share of the planned tokens done, and the total at the pace "
            "so far; past the budget in red.</p>"
            + table([(h, i > 0) for i, h in enumerate(headers)], cells, "").replace("<table>", '<table class="plan">', 1)
            + "</section>")


def _footer(d: Report) -> str:
    defs = "".join(f"<dt>{esc(label)}</dt><dd>{esc(sentence)}</dd>" for label, sentence in meanings(d))
    return ("<footer><h3>What the lines mean</h3><dl>" + defs +
            "<dt>Effective MFU</dt><dd>model FLOPs of the tokens kept over the peak FLOPs of all the GPU time the runs "
            "were billed for; the trainer's MFU counts productive time only.</dd></dl>"
            f"<p>Generated by gpuledger from marts.fct_cost_daily, fct_job_cost, fct_rerun_loss, fct_idle_waste_daily, "
            f"fct_node_hourly and fct_run_efficiency_daily for team {esc(d.team)}, {esc(when(d.start))} to "
            f"{esc(when(d.end))}.</p></footer>")
