"""The alerts page (`gpuledger serve` answers it at /alerts): the alerts of ops.alerts for people, as
`gpuledger alerts` lists them in a terminal — a summary per kind and team (alerts, open ones, money at
stake per currency, two currencies never added: lib/alert_money.summary_groups), then the open alerts, most
severe first, then the latest resolved ones. Built with the report's page shell and table (html_page)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from pipelines.lib.alert_money import summary_groups
from pipelines.lib.warehouse import has_table
from pipelines.reports.fmt import esc, money, when
from pipelines.reports.html_page import page, table

SEVERITY_ORDER = ("critical", "warning", "info")
RESOLVED_SHOWN = 50  # the latest resolved alerts listed; the rest are counted in one sentence


def load_alerts(con: duckdb.DuckDBPyConnection, where: str, params: list) -> list[dict] | None:
    """The alerts rows `where` (a bound condition on `team`, the caller's: the server's team filter)
    keeps, as dicts; None in a warehouse without ops.alerts."""
    if not has_table(con, "ops", "alerts"):
        return None
    cur = con.execute(f"SELECT * FROM ops.alerts WHERE {where} ORDER BY opened_at DESC, alert_id", params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _severity_rank(a: dict) -> int:
    return SEVERITY_ORDER.index(a["severity"]) if a["severity"] in SEVERITY_ORDER else len(SEVERITY_ORDER)


def _rows(alerts: list[dict], resolved: bool) -> list[list[tuple]]:
    """An alert a row: what and of what, its message whole beneath (as `gpuledger alerts` prints it)."""
    out = []
    for a in alerts:
        what = f"{a['kind'].replace('_', ' ')}: {a['subject_type'].replace('_', ' ')} {a['subject']}"
        out.append([("", a["severity"]), ("wrap action", what, a["message"]), ("wrap", a["team"] or "–"),
                    # a resolved one's end beneath its start: one column, so the table fits a phone
                    ("", when(a["opened_at"]), f"to {when(a['resolved_at'])}") if resolved else ("", when(a["opened_at"])),
                    ("n", money(a["cost_at_stake"], a["billing_currency"]))])
    return out


def _headers(resolved: bool) -> list[tuple[str, bool]]:
    return [("severity", False), ("alert", False), ("team", False), ("held" if resolved else "opened", False),
            ("at stake", True)]


def render_alerts(alerts: list[dict] | None, who: str, nav: Sequence[tuple[str, str]] = ()) -> str:
    """The page for `alerts` (load_alerts), of `who` ("team pretrain", "every team")."""
    title = f"Alerts: {who}"
    if alerts is None:
        body = ("<section><h2>No alerts table</h2><p>This warehouse has no ops.alerts (it was built before "
                "alerts existed): run `gpuledger run` again for the days to get them.</p></section>")
        return page(title, f"Alerts · {who}", body, "Times in UTC", nav=nav)
    open_ = sorted((a for a in alerts if a["resolved_at"] is None), key=lambda a: (_severity_rank(a), a["opened_at"]))
    resolved = [a for a in alerts if a["resolved_at"] is not None]
    resolved.sort(key=lambda a: a["resolved_at"], reverse=True)
    summary = [[("", kind.replace("_", " ")), ("wrap", team), ("n", str(n)), ("n", str(n_open)),
                ("n brk", ", ".join(money(v, c) for c, v in stake.items()) or "–")]
               for kind, team, n, n_open, stake in summary_groups(alerts)]
    lead = (f"{len(alerts)} alert{'s' if len(alerts) != 1 else ''} for {who}, {len(open_)} open. An alert is an "
            "episode: opened when its condition first held, resolved when it stopped. At stake: what the condition "
            "has cost so far, per currency (money two alerts both name is counted once).")
    more = len(resolved) - RESOLVED_SHOWN
    body = (f'<p class="summary">{esc(lead)}</p>'
            '<section data-section="alerts-summary"><h2>By kind and team</h2>'
            + table([("kind", False), ("team", False), ("alerts", True), ("open", True), ("at stake", True)],
                    summary, f"No alerts for {who}: no hung jobs, idle sessions, budget thresholds or cost "
                             "anomalies were raised.") + "</section>"
            '<section data-section="alerts-open"><h2>Open</h2><p class="note">Most severe first, then the oldest.</p>'
            + table(_headers(False), _rows(open_, False), "No open alerts: nothing needs looking at now.") + "</section>"
            '<section data-section="alerts-resolved"><h2>Resolved</h2><p class="note">The latest first'
            + (f"; {more} older ones not listed" if more > 0 else "") + ".</p>"
            + table(_headers(True), _rows(resolved[:RESOLVED_SHOWN], True), "No resolved alerts.") + "</section>")
    return page(title, f"Alerts · {who}", body, "Times in UTC · money in the currency it was billed in", nav=nav)
