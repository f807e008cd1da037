"""A training run's page: its days (GPU time, tokens, MFU, goodput, cost per 1M tokens), where its GPU time
went (goodput and each kind of badput), and its plan against actual; one section per billing currency, as
the team report has. `gpuledger serve` answers it at /runs/<run_id>; `gpuledger report --run` writes the
same page to `<out_dir>/_runs/<run_id>.html`."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import duckdb

from pipelines.lib.atomic import replace_atomically
from pipelines.lib.names import file_name, unknown_name

from pipelines.reports.data import RunBudget, query
from pipelines.reports.fmt import gpu_hours, money, pct, ratio_pct, tokens
from pipelines.reports.html_page import page, plan_against_actual, table


def run_teams(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """The teams a run's cost went to; none for a run the ledger does not have."""
    return [t for (t,) in con.execute("SELECT DISTINCT team FROM marts.fct_run_efficiency_daily WHERE run_id = $run "
                                      "ORDER BY 1", {"run": run_id}).fetchall()]


RUNS_FOLDER = "_runs"


def check_run_request(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """A run the ledger has days of; a typo is a ValueError naming the closest run."""
    if not run_teams(con, run_id):
        known = [r for (r,) in con.execute("SELECT DISTINCT run_id FROM marts.fct_run_efficiency_daily "
                                           "WHERE run_id IS NOT NULL ORDER BY 1").fetchall()]
        raise ValueError(unknown_name("run", run_id, known, "the ledger (marts.fct_run_efficiency_daily)"))


def write_run_report(con: duckdb.DuckDBPyConnection, run_id: str, out_dir: Path) -> list[Path]:
    """The run's whole history as out_dir/_runs/<run_id>.html (the page serve answers); its path."""
    text = run_report_html(con, run_id)
    folder = Path(out_dir) / RUNS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{file_name(run_id)}.html"
    replace_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return [path]


def run_report_html(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    days = query(con, "run_days", run=run_id)
    if not days:
        raise ValueError(f"the ledger has no run {run_id!r} (marts.fct_run_efficiency_daily)")
    badput = query(con, "run_badput", run=run_id)
    currencies = list(dict.fromkeys(d[0] for d in days))
    plans = query(con, "run_plan", run=run_id)
    plan_currency = (plans[0][0] or currencies[0]) if plans else None
    sections = [_section(c, [d[1:] for d in days if d[0] == c], [b[1:] for b in badput if b[0] == c],
                         [RunBudget(*p[1:]) for p in plans if c == plan_currency]) for c in currencies]
    first = days[0]
    sub = (f"Team {first[2]} · project {first[3] or '–'} · {first[4] or 'unknown GPU'} {first[5] or ''}".strip()
           + f" · {days[0][1]} to {days[-1][1]} · days in UTC")
    return page(f"Run {run_id}", f"Run {run_id}", "".join(sections), sub=sub)


def _section(c: str, days: list[tuple], badput: list[tuple], budgets: list[RunBudget]) -> str:
    cost = sum((d[12] for d in days), Decimal(0))
    head = (f"<h2>Billed in {c}</h2><p>{money(cost, c)} over {len(days)} day(s), "
            f"{gpu_hours(sum(d[5] for d in days))} GPU-hours, {tokens(sum(d[7] or 0 for d in days))} tokens kept.</p>")
    day_rows = [[("", str(d[0])), ("n", gpu_hours(d[5])), ("n", tokens(d[7])), ("n", ratio_pct(d[8])),
                 ("n", ratio_pct(d[9])), ("n", ratio_pct(d[10])), ("n", ratio_pct(d[11])), ("n", money(d[12], c)),
                 ("n", money(d[13], c) if d[13] is not None else "–"),
                 ("n", money(d[14], c) if d[14] is not None else "–")] for d in days]
    day_table = table([("day", False), ("GPU-hours", True), ("tokens kept", True), ("MFU", True),
                       ("effective MFU", True), ("trainer's own MFU", True), ("goodput", True), ("cost", True),
                       ("per 1M tokens", True), ("at target MFU", True)], day_rows, "No days.")
    total = sum((b[2] for b in badput), Decimal(0))
    badput_rows = [[("", kind.replace("_", " ")), ("n", gpu_hours(gs)), ("n", money(ec, c)), ("n", pct(ec, total))]
                   for kind, gs, ec in badput]
    badput_table = table([("where the GPU time went", False), ("GPU-hours", True), ("cost", True), ("share", True)],
                         badput_rows, "No GPU time recorded for the run.")
    return (head + "<section><h2>Day by day</h2>" + day_table + "</section>"
            + "<section><h2>Where the GPU time went</h2><p class=\"note\">Goodput and each kind of badput "
            "(docs/ledger.md): they sum to the run's GPU time and cost.</p>" + badput_table + "</section>"
            + plan_against_actual(budgets, c))
