"""`gpuledger alerts` (pipelines/cli/commands/alerts.py) on a warehouse of hand-written alerts: the summary by kind
and team (money per currency, never added), the filters, `--json` with `details` an object, the "did you
mean" refusals of a mistyped team or kind, and lines that fit 80 columns."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from pipelines.cli.main import main
from tests.support.alert_servers import alert, warehouse_with_alerts


def _episode(alert_id: str, *, opened: datetime, resolved: datetime | None = None, status: str = "pending",
             **kw) -> dict:
    row = alert(alert_id, **kw)
    row.update(opened_at=opened, updated_at=resolved or datetime(2026, 11, 30, 23), resolved_at=resolved, status=status)
    return row


@pytest.fixture
def wh(tmp_path):
    return warehouse_with_alerts(tmp_path / "w.duckdb", [
        _episode("s1", kind="idle_session", subject_type="job", subject="c1/201", team="research", severity="warning",
                 cost="10.25", opened=datetime(2026, 11, 29, 3),
                 message="session jupyter-alice (job 201 on c1, h3) has held 1 GPU idle for 10 h 00 min, since "
                         "2026-11-29 01:00 UTC, about 10.25 USD so far"),
        _episode("s2", kind="idle_session", subject_type="job", subject="c1/202", team="research", severity="warning",
                 cost="3", currency="EUR", opened=datetime(2026, 11, 28, 3), resolved=datetime(2026, 11, 28, 9),
                 status="delivered"),
        _episode("h1", kind="hung_job", subject_type="job", subject="c1/301", team="pretrain", severity="critical",
                 cost="100.5", opened=datetime(2026, 11, 30, 1, 30)),
        _episode("b1", team="pretrain", severity="info", threshold="30%", cost="1234.5", opened=datetime(2026, 11, 27),
                 status="delivered"),
    ])


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main(["alerts", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_summary_by_kind_and_team_then_each_alert_in_80_columns(wh, capsys):
    code, out, _ = _run(capsys, "--warehouse", str(wh))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "4 alerts, 3 open"
    summary = {(line[:21].strip(), line[22:42].strip()): line for line in lines[2:5]}
    assert summary[("budget: run", "pretrain")].split()[3:] == ["1", "1", "1,234.50", "USD"]
    assert summary[("hung_job", "pretrain")].split()[2:] == ["1", "1", "100.50", "USD"]
    # research's two sessions: one open; their money in two currencies, a line each, never added
    assert summary[("idle_session", "research")].split()[2:] == ["2", "1", "3.00", "EUR"]
    assert lines[5].split() == ["10.25", "USD"] and len(lines[5]) == len(lines[4])  # aligned beneath
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    # the alerts after it, open ones first, the most severe first; each message whole
    body = "\n".join(lines[7:])
    assert body.index("OPEN     critical hung_job") < body.index("OPEN     warning  idle_session")
    assert body.index("idle_session") < body.index("resolved")
    assert "has held 1 GPU idle for 10 h 00 min" in " ".join(body.split())



def test_the_summary_adds_money_two_budget_alerts_share_once(tmp_path, capsys):
    """A run's budget and its pace both name the run's spend to date: one run, its money once. A project's
    month holds its runs' spend, so months are a line of their own, never added to the runs'."""
    opened = datetime(2026, 11, 27)
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [
        _episode("r1", subject="llm-8b", cost="1000", opened=opened),
        _episode("p1", subject_type="run_pace", subject="llm-8b", threshold="burn_ahead", cost="1000", opened=opened),
        _episode("r2", subject="llm-70b", threshold="100%", cost="250.25", opened=opened),
        _episode("m1", subject_type="project_month", subject="llm 2026-11", threshold="50%", cost="5000",
                 opened=opened),
    ])
    code, out, _ = _run(capsys, "--warehouse", str(wh))
    assert code == 0
    rows = {line[:21].strip(): line.split()[-4:] for line in out.splitlines()[2:4]}
    assert rows == {"budget: run": ["3", "3", "1,250.25", "USD"],
                    "budget: project month": ["1", "1", "5,000.00", "USD"]}

def test_filters_by_team_kind_severity_day_and_state(wh, capsys):
    def ids(*args):
        code, out, err = _run(capsys, "--warehouse", str(wh), "--json", *args)
        assert code == 0, err
        return sorted(a["alert_id"] for a in json.loads(out))

    assert ids("--team", "research") == ["s1", "s2"]
    assert ids("--kind", "idle_session", "--open") == ["s1"]
    assert ids("--severity", "warning") == ["h1", "s1", "s2"]
    assert ids("--severity", "critical") == ["h1"]
    assert ids("--since", "2026-11-29") == ["b1", "h1", "s1"]  # s2 was resolved on the 28th; b1 still holds
    assert ids("--open") == ["b1", "h1", "s1"]
    assert ids("--undelivered") == ["h1", "s1"]


def test_json_rows_keep_their_columns_with_details_an_object(wh, capsys):
    code, out, _ = _run(capsys, "--warehouse", str(wh), "--json", "--kind", "hung_job")
    [row] = json.loads(out)
    assert row["details"] == {"burn_pct": "80.25"}
    for column in ("alert_id", "kind", "severity", "subject_type", "subject", "threshold", "team", "day", "raised_at",
                   "message", "cost_at_stake", "billing_currency", "status", "opened_at", "updated_at", "resolved_at"):
        assert column in row, column
    assert row["cost_at_stake"].startswith("100.5") and row["resolved_at"] is None


@pytest.mark.parametrize("args, sentence", [
    (("--team", "reserch"), "no team 'reserch' in the alerts of"),
    (("--kind", "hung_jobs"), "no alert kind 'hung_jobs' in gpuledger — did you mean 'hung_job'?"),
])
def test_a_mistyped_team_or_kind_is_refused_naming_the_closest(wh, capsys, args, sentence):
    code, out, err = _run(capsys, "--warehouse", str(wh), *args)
    assert code == 2 and out == "" and sentence in err
    if args[0] == "--team":
        assert "did you mean 'research'?" in err
