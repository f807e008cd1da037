"""A user's report (`gpuledger report --user U`): what their jobs cost in each team, by ledger category
and currency, the jobs of theirs that wasted GPU time, and those that were busy but under-used
(docs/ledger.md#under-use-a-lens-on-productive-time). `<out_dir>/_users/<user>/<label>.html`, `.md`,
`.csv` (the user's rows of marts.fct_user_cost_daily). Money is never added across currencies.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

from models import ledger_categories
from pipelines.lib.atomic import replace_atomically
from pipelines.lib.csv_cells import guard
from pipelines.lib.names import file_name
from pipelines.reports import html_page, markdown, underuse
from pipelines.reports.data import TOP, JobWaste, jobs_by_kind, query
from pipelines.reports.fmt import esc, gpu_hours, money, pct, plain_decimal, when
from pipelines.reports.waste import check_named_in_ledger

USERS_FOLDER = "_users"
CSV_COLUMNS = ("day", "team", "user_name", "category", "billing_currency", "gpu_seconds", "effective_cost",
               "billed_cost", "low_activity_gpu_seconds", "low_activity_cost")


@dataclass
class UserSection:
    """One currency's part of a user's report."""
    currency: str
    by_team_category: list[tuple[str, str, float, Decimal, float, Decimal]]
    jobs: dict[str, list[JobWaste]]
    underused: list[underuse.UnderUsedJob]

    @property
    def total(self) -> Decimal:
        return sum((r[3] for r in self.by_team_category), Decimal(0))

    @property
    def waste(self) -> Decimal:
        return sum((r[3] for r in self.by_team_category if r[1] in ledger_categories.WASTE), Decimal(0))

    @property
    def low_activity_cost(self) -> Decimal:
        return sum((r[5] for r in self.by_team_category), Decimal(0))

    @property
    def productive(self) -> Decimal:
        return sum((r[3] for r in self.by_team_category if r[1] == "productive"), Decimal(0))


def check_user_request(con: duckdb.DuckDBPyConnection, user: str, start: date, end: date) -> None:
    """A user the ledger has jobs of in the period; a typo is a ValueError naming the closest user."""
    present = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'marts' "
                          "AND table_name IN ('fct_user_cost_daily', 'fct_job_efficiency_daily')").fetchone()[0]
    if present < 2:
        raise RuntimeError("the warehouse has no marts.fct_user_cost_daily: run `gpuledger run` for the days "
                           "with this version first, or point at another warehouse")
    check_named_in_ledger(con, "user", user, "marts.fct_user_cost_daily", "user_name", start, end)


def load(con: duckdb.DuckDBPyConnection, user: str, start: date, end: date) -> list[UserSection]:
    rows = query(con, "user_cost", user=user, start=start, end=end)
    currencies = sorted({r[0] for r in rows})
    if not currencies:
        return []
    p = {"team": None, "user": user, "start": start, "end": end, "first_currency": currencies[0], "top": TOP}
    jobs = query(con, "waste_jobs", **p)
    underused = query(con, "waste_underuse_jobs", **p)
    return [UserSection(c, [r[1:] for r in rows if r[0] == c],
                        jobs_by_kind([r[1:] for r in jobs if r[0] == c]),
                        underuse.jobs_of([r[1:] for r in underused if r[0] == c])) for c in currencies]


def write_user_report(con: duckdb.DuckDBPyConnection, user: str, start: date, end: date, label: str,
                      out_dir: Path) -> list[Path]:
    sections = load(con, user, start, end)
    folder = Path(out_dir) / USERS_FOLDER / file_name(user)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{label}.html", folder / f"{label}.md", folder / f"{label}.csv"]
    texts = (_html(user, label, start, end, sections), _markdown(user, label, sections), _csv(con, user, start, end))
    for path, text in zip(paths, texts):
        replace_atomically(path, lambda tmp, text=text: tmp.write_text(text, encoding="utf-8"))
    return paths


def user_report_html(con: duckdb.DuckDBPyConnection, user: str, start: date, end: date, label: str) -> str:
    """The page the file holds and `gpuledger serve` answers."""
    return _html(user, label, start, end, load(con, user, start, end))


def _category_rows(s: UserSection) -> list[list[str]]:
    return [[team, ledger_categories.BY_NAME[cat].label if cat in ledger_categories.BY_NAME else cat,
             gpu_hours(gs), money(cost, s.currency), pct(cost, s.total),
             money(low, s.currency) if cat == "productive" else "–"]
            for team, cat, gs, cost, _, low in s.by_team_category]


CATEGORY_HEADERS = ["team", "category", "GPU-hours", "cost", "share", "of it at low activity"]
JOB_HEADERS = ["job", "name", "project", "state", "wasted GPU-h", "waste cost", "job cost"]
JOB_KINDS = (("allocated_idle", "Hung or idle jobs"), ("failed_job", "Failed jobs nothing resumed"),
             ("unmonitored", "Jobs without telemetry"))


def _job_rows(jobs: list[JobWaste], c: str) -> list[list[str]]:
    return [[j.job_id + (f" ({j.cluster})" if j.cluster else ""), j.job_name or "–", j.project or "–", j.state or "–",
             gpu_hours(j.waste_gpu_seconds), money(j.waste_cost, c), money(j.effective_cost, c)] for j in jobs]


def _headline(s: UserSection) -> str:
    c = s.currency
    return (f"Jobs cost {money(s.total, c)}; {money(s.waste, c)} of it ({pct(s.waste, s.total)}) was waste, and "
            f"{money(s.low_activity_cost, c)} ({pct(s.low_activity_cost, s.productive)} of productive cost) ran "
            "at low SM activity.")


def _html(user: str, label: str, start: date, end: date, sections: list[UserSection]) -> str:
    def table(headers: list[str], rows: list[list[str]], empty: str, numeric: set[int]) -> str:
        return html_page.table([(h, i in numeric) for i, h in enumerate(headers)],
                               [[("n" if i in numeric else "", v) for i, v in enumerate(r)] for r in rows], empty)

    body = []
    for s in sections:
        body.append(f'<section data-currency="{esc(s.currency)}"><h2>Billed in {esc(s.currency)}</h2>'
                    f'<p class="summary">{esc(_headline(s))}</p>'
                    + table(CATEGORY_HEADERS, _category_rows(s), "", {2, 3, 4, 5}) + "</section>")
        parts = [f"<h3>{esc(title)}</h3>" + table(JOB_HEADERS, _job_rows(s.jobs[kind], s.currency), "None.", {4, 5, 6})
                 for kind, title in JOB_KINDS]
        body.append("<section><h2>Jobs to look at</h2>" + "".join(parts) + "</section>")
        body.append(f'<section data-section="underuse"><h2>Busy but under-used</h2><p class="note">{esc(underuse.NOTE)}</p>'
                    + table(underuse.JOB_HEADERS, underuse.job_rows(s.underused, s.currency),
                            "No job ran at low activity, held GPUs it never used or fits a smaller GPU.", {3, 4, 5, 7, 8})
                    + "</section>")
    if not sections:
        body.append(f"<section><h2>No cost recorded</h2><p>No job of {esc(user)} has cost in this period.</p></section>")
    period = when(start) if start == end else f"{when(start)} to {when(end)}"
    return html_page.page(f"GPU cost and waste: user {user}, {label}", f"User {user} · {period}", "".join(body))


def _markdown(user: str, label: str, sections: list[UserSection]) -> str:
    md, tbl = markdown.md, markdown.table
    out = [f"# GPU cost and waste: user {md(user)}, {md(label)}\n", "Days in UTC; effective cost.\n"]
    for s in sections:
        out.append(f"## Billed in {md(s.currency)}\n")
        out.append(md(_headline(s)) + "\n")
        out.append(tbl(CATEGORY_HEADERS, _category_rows(s), "", {2, 3, 4, 5}))
        for kind, title in JOB_KINDS:
            out.append(f"### {md(title)}\n")
            out.append(tbl(JOB_HEADERS, _job_rows(s.jobs[kind], s.currency), "None.", {4, 5, 6}))
        out.append("### Busy but under-used\n")
        out.append(tbl(underuse.JOB_HEADERS, underuse.job_rows(s.underused, s.currency),
                       "No job ran at low activity, held GPUs it never used or fits a smaller GPU.", {3, 4, 5, 7, 8}))
    return "\n".join(out)


def _csv(con: duckdb.DuckDBPyConnection, user: str, start: date, end: date) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    rows = con.execute(f"SELECT {', '.join(CSV_COLUMNS)} FROM marts.fct_user_cost_daily WHERE user_name = $u "
                       "AND day BETWEEN $s AND $e ORDER BY ALL", {"u": user, "s": start, "e": end}).fetchall()
    for day, team, u, cat, cur, gs, e, b, lgs, lc in rows:
        writer.writerow([day.isoformat(), guard(team), guard(u), guard(cat), guard(cur), repr(float(gs)),
                         plain_decimal(e), plain_decimal(b), repr(float(lgs)), plain_decimal(lc)])
    return buf.getvalue()
