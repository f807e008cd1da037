"""The organisation's page, HTML and Markdown, and writing it (org.py loads it). Its tables are plain text made once
here (`*_table`) and escaped by each renderer: html_page.table for HTML, markdown.table for Markdown;
the page shell, CSS and charts are the team report's (html_page.page, svg.stacked_bars)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from urllib.parse import quote

import duckdb

from pipelines.lib.atomic import replace_atomically
from pipelines.lib.names import file_name
from pipelines.reports import html_page, markdown, savings, svg
from pipelines.reports.data import WASTE_KINDS
from pipelines.reports.fmt import esc, gpu_hours, money, pct, when
from pipelines.reports.org import INDEX, TOP_SAVINGS, UTILISATION_NOTE, WASTE_LABELS, OrgReport, Utilisation, load
from pipelines.reports.period import check_label
from pipelines.reports.summary import period_text

SHARES = (("productive", "Productive", "#2f855a"), ("allocated_other", "Allocated, failed or lost", "#dd6b20"),
          ("allocated_idle", "Allocated, idle (hung)", "#c53030"), ("idle_unallocated", "Idle, no job", "#a0aec0"))


def _cluster(c: str | None) -> str:
    return c if c is not None else "(no cluster)"


def team_table(r: OrgReport) -> tuple[list[str], list[list[str]]]:
    headers = ["team", "billed in", "total cost", "GPU cost", "waste", "waste % of GPU cost", "under-used",
               "savings over the window", "savings per month"]
    rows = [[t.team, t.currency, money(t.total, t.currency), money(t.gpu_cost, t.currency),
             money(t.waste, t.currency), pct(t.waste, t.gpu_cost), money(t.low_activity_cost, t.currency),
             money(t.saving_window, t.currency), money(t.saving_monthly, t.currency)] for t in r.teams]
    return headers, rows


def waste_table(r: OrgReport) -> tuple[list[str], list[list[str]]]:
    headers = ["team", "billed in"] + [WASTE_LABELS[k] for k in WASTE_KINDS]
    rows = [[t.team, t.currency] + [money(t.by_category.get(k), t.currency) for k in WASTE_KINDS] for t in r.teams]
    return headers, rows


def reporting_table(r: OrgReport) -> tuple[list[str], list[list[str]]]:
    c = r.reporting_currency
    headers = ["team", f"total cost in {c}", f"waste in {c}", f"under-used in {c}", f"savings per month in {c}",
               "not converted (no rate)"]
    rows = [[t.team, money(t.total, c), money(t.waste, c), money(t.low_activity_cost, c), money(t.saving_monthly, c),
             ", ".join(t.missing) or "–"] for t in r.in_reporting]
    return headers, rows


def _shares(u: Utilisation) -> list[str]:
    return [gpu_hours(u.billed), pct(u.allocated, u.billed), pct(u.productive, u.billed), pct(u.idle, u.billed)]


UTIL_HEADERS = ["cluster", "billed GPU-hours", "allocated", "productive", "idle"]


def utilisation_table(r: OrgReport) -> tuple[list[str], list[list[str]]]:
    return UTIL_HEADERS, [[_cluster(u.cluster)] + _shares(u) for u in r.utilisation]


def utilisation_daily_table(r: OrgReport) -> tuple[list[str], list[list[str]]]:
    return (["cluster", "day"] + UTIL_HEADERS[1:],
            [[_cluster(u.cluster), when(u.day)] + _shares(u) for u in r.utilisation_daily])


def top_savings(r: OrgReport) -> list[savings.Opportunity]:
    return r.savings.opportunities[:TOP_SAVINGS]  # largest first: in the reporting currency, then the bill's


def top_table(r: OrgReport) -> tuple[list[str], list[list[str]]]:
    top = savings.Savings(r.savings.available, r.start, r.end, top_savings(r))
    return (["team"] + savings.HEADERS,
            [[o.team or "(organisation)"] + row for o, row in zip(top.opportunities, savings.rows(top))])


def _summary(r: OrgReport) -> str:
    teams = sorted({t.team for t in r.teams})
    by_cur = {}
    for t in r.teams:
        total, waste = by_cur.get(t.currency, (0, 0))
        by_cur[t.currency] = (total + t.total, waste + t.waste)
    money_text = "; ".join(f"{money(tot, c)} billed in {c}, {money(w, c)} of it waste" for c, (tot, w) in sorted(by_cur.items()))
    return f"{len(teams)} teams ({', '.join(teams)}) in {period_text(r)}: {money_text or 'no cost'}."


def _days(r: OrgReport) -> list:
    """The trend window's days, from the first to the last the ledger has node-hours for (a month in
    progress is not drawn as weeks of empty bars)."""
    have = [u.day for u in r.utilisation_daily]
    first, last = (min(have), max(have)) if have else (r.trend_start, r.trend_end)
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def _chart(r: OrgReport, cluster: str | None) -> str:
    days = _days(r)
    rows = {u.day: u for u in r.utilisation_daily if u.cluster == cluster}
    parts = {"productive": lambda u: u.productive, "allocated_other": lambda u: u.allocated - u.productive - (u.idle - (u.billed - u.allocated)),
             "allocated_idle": lambda u: u.idle - (u.billed - u.allocated), "idle_unallocated": lambda u: u.billed - u.allocated}
    series = []
    for key, label, colour in SHARES:
        values = [100 * max(0.0, parts[key](rows[d])) / rows[d].billed if d in rows and rows[d].billed else 0.0 for d in days]
        series.append(svg.Series(label, colour, values, [f"{d}: {label} {v:.1f}% of billed GPU-hours" for d, v in zip(days, values)]))
    totals = [f"{gpu_hours(rows[d].billed)} h" if d in rows else "" for d in days]
    labels = [d.strftime("%a %d %b") if len(days) <= 10 else d.strftime("%d %b") for d in days]
    return svg.stacked_bars(labels, series, totals, y_format=lambda v: f"{v:.0f}%", label=f"Utilisation of {_cluster(cluster)} by day",
                            height=230, y_max=100.0)


def file_href(team: str, label: str) -> str:
    """The team report's file beside index.html, as `gpuledger report --org` writes them."""
    return f"{quote(file_name(team))}/{quote(label)}.html"


def _links_html(r: OrgReport, href=file_href) -> str:
    items = []
    for team in r.team_names():
        labels = r.links.get(team, [])
        links = " · ".join(f'<a href="{esc(href(team, label))}">{esc(label)}</a>' for label in labels)
        none = '<span class="empty">no report in this folder</span>'
        items.append(f"<li><b>{esc(team)}</b>: {links or none}</li>")
    return ("<section data-section=\"links\"><h2>Team reports</h2><p class=\"note\">Every team report in this folder "
            "(each opens its team's \"What to do\" first).</p><ul>" + "".join(items) + "</ul></section>")


def _html_table(headers: list[str], rows: list[list[str]], text_cols: set[int], empty: str = "None.",
                wrap: set[int] = frozenset()) -> str:
    return html_page.table([(h, i not in text_cols) for i, h in enumerate(headers)],
                           [[("wrap" if i in wrap else "" if i in text_cols else "n", v) for i, v in enumerate(row)]
                            for row in rows], empty)


def render_html(r: OrgReport, href=file_href, nav=()) -> str:
    """`href(team, label)`: where a team report's link points (a file, or a served URL); `nav`: (text,
    href) links under the heading, for the served page."""
    body = [f'<p class="summary">{esc(_summary(r))}</p>']
    top_note = savings.intro(r.savings, "the organisation")
    h, rows = top_table(r)
    body.append(f'<section data-section="top-savings"><h2>Top savings</h2><p class="note">{esc(top_note)}</p>'
                + (_html_table(h, rows, {0, 1, 2}, wrap={1, 2}) if rows else "") + "</section>")
    h, rows = team_table(r)
    body.append('<section data-section="teams"><h2>Teams</h2><p class="note">Per team and the currency it was billed '
                "in (amounts in two currencies are never added). Waste: GPU cost that bought no training progress "
                "(the ledger's waste categories). Under-used: productive cost at low SM activity. Savings: the "
                "team's savings opportunities.</p>" + _html_table(h, rows, {0, 1}, "No cost in this period."))
    h, rows = waste_table(r)
    body.append("<h3>Waste by kind</h3>" + _html_table(h, rows, {0, 1}, "No cost in this period.") + "</section>")
    if r.in_reporting:
        h, rows = reporting_table(r)
        body.append(f'<section data-section="reporting"><h2>Teams in {esc(r.reporting_currency)}</h2><p class="note">'
                    "Each currency converted at the config's exchange rate (fx:) for its month; a currency "
                    "without a rate is named, not added.</p>" + _html_table(h, rows, {0, 5}) + "</section>")
    h, rows = utilisation_table(r)
    charts = "".join(f"<h3>{esc(_cluster(u.cluster))}</h3>{_chart(r, u.cluster)}" for u in r.utilisation)
    h2, rows2 = utilisation_daily_table(r)
    body.append(f'<section data-section="utilisation"><h2>Cluster utilisation</h2><p class="note">{esc(UTILISATION_NOTE)}</p>'
                + _html_table(h, rows, {0}, "No billed node-hours in this period.")
                + f'<p class="note">By day: {esc(_trend(r))}</p>' + charts
                + "<h3>By day</h3>" + _html_table(h2, rows2, {0, 1}, "No billed node-hours.") + "</section>")
    body.append(_links_html(r, href))
    return html_page.page(f"GPU cost and waste: organisation, {r.label}", f"Organisation · {period_text(r)}",
                          "".join(body), "Days in UTC · effective cost, in the currency it was billed in", nav=nav)


def _trend(r: OrgReport) -> str:
    if r.start == r.end:
        return f"the 7 days ending {r.end} ({r.trend_start} to {r.trend_end})."
    return f"every day of the period ({r.trend_start} to {r.trend_end})."


def render_markdown(r: OrgReport) -> str:
    md, table = markdown.md, markdown.table
    out = [f"# GPU cost and waste: organisation, {md(period_text(r))}\n", "Days in UTC; effective cost.\n",
           md(_summary(r)) + "\n", "## Top savings\n", md(savings.intro(r.savings, "the organisation")) + "\n"]
    h, rows = top_table(r)
    if rows:
        out.append(table(h, rows, "", {3, 4}))
    h, rows = team_table(r)
    out += ["## Teams\n", table(h, rows, "No cost in this period.", set(range(2, 9)))]
    h, rows = waste_table(r)
    out += ["### Waste by kind\n", table(h, rows, "", set(range(2, 7)))]
    if r.in_reporting:
        h, rows = reporting_table(r)
        out += [f"## Teams in {md(r.reporting_currency)}\n", table(h, rows, "", {1, 2, 3, 4})]
    h, rows = utilisation_table(r)
    out += ["## Cluster utilisation\n", md(UTILISATION_NOTE) + "\n", table(h, rows, "No billed node-hours.", {1, 2, 3, 4})]
    h, rows = utilisation_daily_table(r)
    out += ["### By day\n", table(h, rows, "", {2, 3, 4, 5})]
    out.append("## Team reports\n")
    for team in r.team_names():
        labels = r.links.get(team, [])
        links = ", ".join(f"[{md(label)}]({quote(file_name(team))}/{quote(label)}.md)" for label in labels)
        out.append(f"- **{md(team)}**: {links or 'no report in this folder'}")
    return "\n".join(out) + "\n"


def write_org_report(con: duckdb.DuckDBPyConnection, start: date, end: date, label: str,
                     out_dir: Path) -> list[Path]:
    """Writes out_dir/index.html and index.md for [start, end]; returns their paths."""
    check_label(label, start, end)
    report = load(con, start, end, label, out_dir)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    paths = [Path(out_dir) / f"{INDEX}.html", Path(out_dir) / f"{INDEX}.md"]
    for path, text in zip(paths, (render_html(report), render_markdown(report))):
        replace_atomically(path, lambda tmp, text=text: tmp.write_text(text, encoding="utf-8"))
    return paths
