"""The Markdown waste report: the HTML's headline and tables, for pasting into chat or an issue; a team
billed in several currencies gets them once per currency, under "Billed in EUR".

Input values are HTML-escaped (chat renderers pass HTML through) and Markdown-escaped (a `|` in a job
name would split a table cell, a `*` or `_` would turn text bold), and kept on one line.
"""

from __future__ import annotations

import html
from decimal import Decimal
import re

from pipelines.reports import savings, storage, underuse
from pipelines.reports.data import GPU_CATEGORIES, WASTE_HELP, WASTE_KINDS, WASTE_LABELS, Report, ReportData
from pipelines.reports.fmt import gpu_hours, money, pct, ratio_pct, tokens, when
from pipelines.reports.summary import (biggest_contributor, converted_total_text, cost_per_mtok_text, coverage_text,
                                       currencies_text, meanings, money_in, period_text, plan_table,
                                       reporting_table, summary_sentence, team_note)

# `$` too where it could start or end math on GitHub (text between two dollar signs). A `$` right before
# a digit cannot close it there, so money ("$1,234.56") stays as written, which chat shows as it is.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~]|\$(?!\d))")


def md(value: object) -> str:
    # Quotes are harmless in Markdown text; <, > and & are not (chat renderers pass HTML through).
    text = " ".join(html.escape("" if value is None else str(value), quote=False).split())  # newlines end a row
    return _MD_SPECIAL.sub(r"\\\1", text)


def table(headers: list[str], rows: list[list[str]], empty: str, right: set[int] = frozenset()) -> str:
    if not rows:
        return f"_{md(empty)}_\n"
    line = "| " + " | ".join(md(h) for h in headers) + " |\n"
    line += "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|\n"
    for row in rows:
        line += "| " + " | ".join(md(c) for c in row) + " |\n"
    return line


def render(r: Report) -> str:
    out = [f"# GPU cost and waste: team {md(r.team)}, {md(period_text(r))}\n",
           f"Days in UTC; money in {md(money_in(r))}, effective cost.\n"]
    if team_note(r):
        out.append(md(team_note(r)) + "\n")
    out += what_to_do(r.savings, f"team {r.team}")
    if not r.has_data:
        span = (f"The warehouse holds days {r.data_first_day} to {r.data_last_day}." if r.data_first_day
                else "The warehouse holds no cost rows yet.")
        out.append(f"**No cost recorded** for team {md(r.team)} from {md(when(r.start))} to {md(when(r.end))}. {md(span)}\n")
        return "\n".join(out)
    coverage = coverage_text(r)
    if len(r.sections) == 1:
        out += _currency(r.sections[0], coverage, "##")
    else:
        out.append(md(currencies_text(r)) + (" " + md(coverage) if coverage else "") + "\n")
        if r.reporting is not None:
            title, headers, rows = reporting_table(r)
            out.append(f"## {md(title)}\n")
            out.append(table(headers, rows, "", {1, 2, 4, 5}))
        for d in r.sections:
            out.append(f"## Billed in {md(d.currency)}\n")
            out += _currency(d, "", "###")
    out.append("## What the lines mean\n")
    out.append("\n".join(f"- **{md(label)}**: {md(sentence)}" for label, sentence in meanings(r)) + "\n")
    return "\n".join(out)


def what_to_do(s: savings.Savings | None, who: str, heading: str = "## What to do") -> list[str]:
    """The savings opportunities, largest first; one line without any (savings.py)."""
    if s is None:
        return []
    rows, rest = savings.rows(s, savings.SHOWN), savings.rest_text(s, savings.SHOWN)
    return ([f"{heading}\n", md(savings.intro(s, who)) + "\n"] + ([table(savings.HEADERS, rows, "", {2, 3})] if rows else [])
            + ([md(rest) + "\n"] if rest else []))


def _currency(d: ReportData, coverage: str, h: str) -> list[str]:
    """One currency's headline and tables, its headings at level `h`."""
    c = d.currency
    out = []
    gpu_s = sum(d.gpu_seconds(k) for k in GPU_CATEGORIES)
    mfu = ("no run logged tokens" if d.team_effective_mfu is None else f"no training run billed in {c}" if not d.runs else
           f"{ratio_pct(d.team_effective_mfu)} (target {ratio_pct(d.mfu_target, 0)}, trainer-reported "
           f"{ratio_pct(d.team_mfu)}" + (f", below-target cost {money(d.mfu_gap_cost, c)})"
                                       if d.mfu_gap_cost is not None and d.mfu_target is not None
                                       and d.team_effective_mfu < d.mfu_target else ")"))
    out.append(md(summary_sentence(d)) + (" " + md(coverage) if coverage else "") + "\n")
    out.append("\n".join([
        f"- **Total cost:** {md(money(d.total_cost, c))}"
        + (f" {md(converted_total_text(d))}" if converted_total_text(d) else ""),
        f"- **GPU cost:** {md(money(d.gpu_cost, c))} ({md(gpu_hours(gpu_s))} GPU-hours)",
        f"- **Waste:** {md(money(d.waste_cost, c))} = {md(pct(d.waste_cost, d.gpu_cost))} of GPU cost "
        f"({md(gpu_hours(d.waste_gpu_seconds))} GPU-hours)",
        f"- **Busy but under-used:** {md(money(d.low_activity_cost, c))} = "
        f"{md(pct(d.low_activity_cost, d.cost('productive')))} of productive cost at low SM activity",
        f"- **Effective MFU:** {md(mfu)}",
    ]) + "\n")
    kinds = sorted(WASTE_KINDS, key=lambda k: (-d.cost(k), WASTE_KINDS.index(k)))
    out.append(f"{h} Where the waste went\n")
    out.append(table(["kind", "cost", "% of GPU cost", "GPU-hours", "biggest contributor"],
                      [[WASTE_LABELS[k], money(d.cost(k), c), pct(d.cost(k), d.gpu_cost), gpu_hours(d.gpu_seconds(k)),
                        biggest_contributor(d, k)] for k in kinds], "", {1, 2, 3}))
    # what each line that cost something means, right under it (all of them: "What the lines mean")
    if any(d.cost(k) for k in kinds):
        out.append("\n".join(f"- **{md(WASTE_LABELS[k])}**: {md(WASTE_HELP[k])}" for k in kinds if d.cost(k)) + "\n")
    job_headers = ["job", "name", "user", "project", "state", "wasted GPU-h", "waste cost", "job cost"]
    for kind, title in (("allocated_idle", "Hung or idle jobs"), ("failed_job", "Failed jobs nothing resumed")):
        out.append(f"{h} {title}\n")
        out.append(table(job_headers, [[j.job_id + (f" ({j.cluster})" if j.cluster else ""), j.job_name or "–",
                                         j.user_name or "–", j.project or "–", j.state or "–",
                                         gpu_hours(j.waste_gpu_seconds), money(j.waste_cost, c),
                                         money(j.effective_cost, c)]
                                        for j in d.jobs[kind]], "None in this period.", {5, 6, 7}))
    if d.run_badput:
        out.append(f"{h} Badput per run\n")
        out.append(table(["run", "badput cost", "goodput share of GPU time", "largest badput kind"],
                          _badput_rows(d), "", {1, 2}))
    out.append(f"{h} Busy but under-used\n")
    out.append(md(underuse.NOTE) + "\n")
    out.append(table(underuse.JOB_HEADERS, underuse.job_rows(d.underused_jobs, c),
                      "No job ran at low activity, held GPUs it never used or fits a smaller GPU.", {3, 4, 5, 7, 8}))
    out.append(table(underuse.USER_HEADERS, underuse.user_rows(d.users, c), "No user cost in this period.",
                      {1, 2, 3, 4, 5}))
    out.append(f"{h} Work lost to interruptions\n")
    out.append(table(["run", "job", "name", "user", "cause", "interrupted at", "lost GPU-h", "restart GPU-h", "cost"],
                      [[i.run_id or "–", i.job_id or "–", i.job_name or "–", i.user_name or "–", i.cause or "–",
                        when(i.interrupted_at), gpu_hours(i.lost_gpu_seconds), gpu_hours(i.restart_gpu_seconds),
                        money(i.effective_cost, c)] for i in d.interruptions], "None in this period.", {6, 7, 8}))
    out.append(f"{h} Idle nodes\n")
    out.append(table(["node", "days", "idle, no job GPU-h", "hung jobs GPU-h", "idle cost"],
                      [[host, str(n), gpu_hours(u), gpu_hours(a), money(cost, c)] for host, n, u, a, cost in d.idle_nodes],
                      "None in this period.", {1, 2, 3, 4}))
    out.append(f"{h} Training runs\n")
    out.append(table(["run", "project", "tokens kept", "effective MFU", "goodput", "cost", "per 1M tokens",
                       "at target MFU"],
                      [[r.run_id, r.project or "–", tokens(r.tokens_kept), ratio_pct(r.effective_mfu),
                        ratio_pct(r.goodput), money(r.effective_cost, c),
                        cost_per_mtok_text(r, c),
                        money(r.cost_per_mtok_at_target, c) if r.cost_per_mtok_at_target is not None else "–"]
                       for r in d.runs], "None in this period.", {2, 3, 4, 5, 6, 7}))
    if d.storage is not None:
        out.append(f"{h} Storage\n")
        out.append(md(storage.NOTE) + "\n")
        out.append(table(storage.KIND_TIER_HEADERS, storage.kind_tier_rows(d.storage, c), "", {2, 3, 4}))
        out.append(table(storage.RUN_HEADERS, storage.run_rows(d.storage, c), "No run's checkpoints are inventoried.",
                          {1, 4}))
        out.append(md(storage.policy_text(d.storage, c)) + "\n")
    if d.run_budgets:
        out.append(f"{h} Plan against actual\n")
        out.append(table(*plan_table(d.run_budgets, d.currency), "", {1, 2, 3, 4, 5, 6, 7, 8}))
    return out


def _badput_rows(d: ReportData) -> list[list[str]]:
    """Per run: its badput in money, its goodput's share of its GPU time, and its costliest badput kind."""
    runs: dict[str, dict[str, tuple]] = {}
    for run, kind, cost, seconds in d.run_badput:
        runs.setdefault(run, {})[kind] = (cost, seconds)
    rows = []
    for run, kinds in runs.items():
        bad = {k: v for k, v in kinds.items() if k != "goodput"}
        worst = max(bad, key=lambda k: (bad[k][0], k)) if bad else None
        total_s = sum(v[1] for v in kinds.values())
        rows.append((sum((v[0] for v in bad.values()), Decimal(0)), run, [
            run, money(sum((v[0] for v in bad.values()), Decimal(0)), d.currency),
            pct(kinds.get("goodput", (0, 0.0))[1], total_s),
            f"{worst.replace('_', ' ')} ({money(bad[worst][0], d.currency)})" if worst else "–"]))
    return [r for _, _, r in sorted(rows, key=lambda t: (-t[0], t[1]))][:12]
