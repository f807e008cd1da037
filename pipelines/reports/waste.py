"""A team's waste report (`gpuledger report`, docs/operations.md#commands):
`<out_dir>/<team>/<label>.html`, `.md`, `.csv`.

- HTML: first "What to do", the team's savings opportunities of the period largest first (savings.py), then the headline (total cost, GPU cost, waste in money and % of GPU cost by kind, MFU against target),
  then charts (daily cost by category, idle GPU-hours by node and hour, rerun loss per run, MFU and
  cost per 1M tokens per run), then the tables to act on (hung, failed and interrupted jobs, idle
  nodes, runs). One file, no script, no network. A day report's trend charts cover the 7 days ending
  on that day. Money is in the currency it was billed in; a team billed in several currencies gets
  all of the above once per currency (amounts in two currencies are never added), and with `fx:` rates
  each currency's total and waste in the reporting currency, with their sum there (fx.py). Each waste
  line says what it means; the footer says what every line shown means.
- Markdown: the same headline and tables, for chat.
- CSV: one tidy table, the team's ledger at the mart's grain, one row per day × project × category ×
  currency: `day, team, project, category, billing_currency, gpu_seconds, effective_cost, billed_cost`.
  Money is the exact DECIMAL(38,18) as a plain decimal string (no float, no exponent), so the rows of
  a currency sum to that currency's total cost to the last digit and can be reconciled with
  `marts.fct_cost_daily`; a spreadsheet must sum per currency. Job and node
  rankings are left out on purpose: they are another grain, and a column a spreadsheet can sum
  must not mix grains. Text cells that a spreadsheet would run as a formula (starting with = + - @)
  are prefixed with an apostrophe.

Reads `marts.*` and `finance.fx_rates` only; a team with no rows in the period gets a report that says so.
"""

from __future__ import annotations

import csv
import io
from datetime import date
from pathlib import Path

import duckdb

from pipelines.lib.atomic import replace_atomically
from pipelines.lib.csv_cells import guard
from pipelines.lib.names import file_name, unknown_name
from pipelines.reports import data, html_page, markdown, savings
from pipelines.reports.fmt import plain_decimal
from pipelines.reports.period import check_label, period_of

__all__ = ["write_team_report", "period_of", "CSV_COLUMNS", "DEFAULT_REPORTS"]

# where reports go unless told: under the current directory, as every other output a user asks for
DEFAULT_REPORTS = Path("data") / "reports"

CSV_COLUMNS = ("day", "team", "project", "category", "billing_currency", "gpu_seconds", "effective_cost",
               "billed_cost")


def write_team_report(con: duckdb.DuckDBPyConnection, team: str, start: date, end: date, label: str,
                      out_dir: Path) -> list[Path]:
    """Writes the team's report for the days [start, end] (UTC, inclusive) as
    out_dir/<team>/<label>.html, .md and .csv, and returns those three paths. A team name of any text
    works: the folder is `names.file_name(team)`, the team itself for plain names.

    `label` names the files: the day ("2026-11-01") or month ("2026-11") that `period_of` returns.
    Raises ValueError for a label that cannot be a file name, or an empty period."""
    check_label(label, start, end)
    report = load_team_report(con, team, start, end, label)
    folder = Path(out_dir) / file_name(team)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{label}.html", folder / f"{label}.md", folder / f"{label}.csv"]
    for path, text in zip(paths, (html_page.render(report), markdown.render(report), ledger_csv(report))):
        # a reader (a browser refreshing, a Dagster sensor) sees the old report or the new one, never half
        replace_atomically(path, lambda tmp, text=text: tmp.write_text(text, encoding="utf-8"))
    return paths


def load_team_report(con: duckdb.DuckDBPyConnection, team: str, start: date, end: date, label: str):
    """The team's report for [start, end]; `html_page.render` of it is the page the file holds and the
    page `gpuledger serve` answers: one way to build it."""
    report = data.load(con, team, start, end, label)
    report.savings = savings.load(con, start, end, team)
    return report


def team_report_html(con: duckdb.DuckDBPyConnection, team: str, start: date, end: date, label: str,
                     nav=()) -> str:
    """The report's page; `nav`: (text, href) links under its heading, for the served page."""
    return html_page.render(load_team_report(con, team, start, end, label), nav=nav)


def check_report_request(con: duckdb.DuckDBPyConnection, team: str, start: date, end: date) -> None:
    """A report a person asked for by name and period is of a team and days the ledger has: a typo or a
    day outside the data is a ValueError naming what there is, never a report of nothing."""
    check_named_in_ledger(con, "team", team, "marts.fct_cost_daily", "team", start, end)


def check_named_in_ledger(con: duckdb.DuckDBPyConnection, kind: str, name: str, table: str, column: str,
                          start: date, end: date) -> None:
    """`name` is a value of `column` in `table` (constants of the caller) with a day in [start, end];
    else a ValueError naming the closest value there is, or the days it has."""
    known = [v for (v,) in con.execute(f"SELECT DISTINCT {column} FROM {table} ORDER BY 1").fetchall() if v is not None]
    if name not in known:
        raise ValueError(unknown_name(kind, name, known, "the ledger"))
    first, last = con.execute(f"SELECT min(day), max(day) FROM {table} WHERE {column} = $name",
                              {"name": name}).fetchone()
    if end < first or start > last:
        period = start.isoformat() if start == end else f"{start} to {end}"
        raise ValueError(f"{kind} {name!r} has no ledger day in {period}: its days run from {first} to {last}")


def ledger_csv(report: data.Report) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for day, team, project, category, currency, gpu_seconds, effective, billed in report.ledger:
        writer.writerow([day.isoformat(), guard(team), guard(project), guard(category), guard(currency),
                         _seconds(gpu_seconds), plain_decimal(effective), plain_decimal(billed)])
    return buf.getvalue()


def _seconds(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


