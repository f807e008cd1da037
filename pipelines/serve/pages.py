"""Server-rendered pages: the very HTML `gpuledger report` writes to files (pipelines/reports), built by
the same functions. A team-scoped token asking for another team's page, or a user with costs in a team it
may not see, gets the same 404 as a page that does not exist."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse

from pipelines.reports import check_report_request, period_of
from pipelines.reports.org import check_org_request
from pipelines.reports.org_page import load as load_org
from pipelines.reports.org_page import render_html as org_html
from pipelines.reports.user_report import check_user_request, user_report_html
from pipelines.reports.run_report import run_report_html, run_teams
from pipelines.reports.waste import team_report_html
from pipelines.serve.api import BadRequest, only_params
from pipelines.serve.db import reading

NOT_FOUND = "<!doctype html><title>Not found</title><h1>Not found</h1>"


def _period(request: Request, con):
    only_params(request, {"day", "month"})
    day, month = request.query_params.get("day"), request.query_params.get("month")
    if day is None and month is None:  # the month of the ledger's latest day
        latest = con.execute("SELECT max(day) FROM marts.fct_cost_daily").fetchone()[0]
        if latest is None:
            raise LookupError
        month = latest.strftime("%Y-%m")
    try:
        return period_of(day, month if day is None else None)
    except ValueError as err:
        raise BadRequest(str(err)) from None


def _checked_period(request: Request, con, check, *subject) -> tuple | None:
    """The page's period, once `check(con, *subject, start, end)` (the report's own request check) found
    something to show for it; None when it did not: a 404. A malformed period is a 400, naming it."""
    try:
        start, end, label = _period(request, con)
        check(con, *subject, start, end)
    except BadRequest:
        raise
    except (LookupError, ValueError):
        return None
    return start, end, label


def _period_query(label: str) -> str:
    return f"{'day' if len(label) == 10 else 'month'}={label}"


def team(request: Request) -> HTMLResponse:
    name, grant = request.path_params["team"], request.state.grant
    if not grant.sees(name):
        return HTMLResponse(NOT_FOUND, status_code=404)
    with reading(request.app.state.path) as con:
        period = _checked_period(request, con, check_report_request, name)
        if period is None:
            return HTMLResponse(NOT_FOUND, status_code=404)
        return HTMLResponse(team_report_html(con, name, *period))


def user(request: Request) -> HTMLResponse:
    name, grant = request.path_params["user"], request.state.grant
    with reading(request.app.state.path) as con:
        period = _checked_period(request, con, check_user_request, name)
        if period is None:
            return HTMLResponse(NOT_FOUND, status_code=404)
        start, end, label = period
        teams = [r[0] for r in con.execute("SELECT DISTINCT team FROM marts.fct_user_cost_daily WHERE user_name = ? "
                                           "AND day BETWEEN ? AND ?", [name, start, end]).fetchall()]
        if not all(grant.sees(t) for t in teams):  # the page shows every team of the user's
            return HTMLResponse(NOT_FOUND, status_code=404)
        return HTMLResponse(user_report_html(con, name, start, end, label))


def org(request: Request) -> HTMLResponse:
    if request.state.grant.teams is not None:  # every team's numbers: finance's and admins' page
        return HTMLResponse(NOT_FOUND, status_code=404)
    with reading(request.app.state.path) as con:
        period = _checked_period(request, con, check_org_request)
        if period is None:
            return HTMLResponse(NOT_FOUND, status_code=404)
        start, end, label = period
        report = load_org(con, start, end, label, request.app.state.path.parent / "_no_report_files")
        report.links = {t: [label] for t in report.team_names()}  # every team's page is served
        return HTMLResponse(org_html(report, href=lambda t, lab: f"/teams/{quote(t, safe='')}?{_period_query(lab)}"))


def run(request: Request) -> HTMLResponse:
    """A run's whole history: a run of a team the token may not see is as missing as one never run."""
    only_params(request, set())
    run_id, grant = request.path_params["run_id"], request.state.grant
    with reading(request.app.state.path) as con:
        teams = run_teams(con, run_id)
        if not teams or not all(grant.sees(t) for t in teams):
            return HTMLResponse(NOT_FOUND, status_code=404)
        return HTMLResponse(run_report_html(con, run_id))


ROUTES = {"/": org, "/teams/{team}": team, "/users/{user}": user, "/runs/{run_id}": run}
