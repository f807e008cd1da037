"""Server-rendered pages: the very HTML `gpuledger report` writes to files (pipelines/reports), built by
the same functions. A team-scoped token asking for another team's page, or a user with costs in a team it
may not see, gets the same 404 as a page that does not exist."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse

from pipelines.reports import check_report_request, period_of, savings
from pipelines.reports.alerts_page import load_alerts, render_alerts
from pipelines.reports.org import check_org_request
from pipelines.reports.org_page import load as load_org
from pipelines.reports.org_page import render_html as org_html
from pipelines.reports.user_report import check_user_request, user_report_html
from pipelines.reports.run_report import run_report_html, run_teams
from pipelines.reports.savings_page import render_savings, split_by_team
from pipelines.reports.waste import team_report_html
from pipelines.serve.api import BadRequest, only_params, team_filter
from pipelines.serve.db import reading
from pipelines.serve.login import COOKIE

NOT_FOUND = "<!doctype html><title>Not found</title><h1>Not found</h1>"


def _period(request: Request, con, also: frozenset[str] = frozenset()):
    only_params(request, {"day", "month", *also})
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


def _checked_period(request: Request, con, check, *subject, also: frozenset[str] = frozenset()) -> tuple | None:
    """The page's period, once `check(con, *subject, start, end)` (the report's own request check) found
    something to show for it; None when it did not: a 404. A malformed period is a 400, naming it.
    `also`: the page's parameters besides the period's."""
    try:
        start, end, label = _period(request, con, also)
        check(con, *subject, start, end)
    except BadRequest:
        raise
    except (LookupError, ValueError):
        return None
    return start, end, label


def _period_query(label: str) -> str:
    return f"{'day' if len(label) == 10 else 'month'}={label}"


def _nav(request: Request, team: str | None, label: str | None = None, *, leave_out: str = "") -> list[tuple[str, str]]:
    """The served pages' links to a team's (None: every team's) savings and alerts pages (but the page's
    own, `leave_out`), and Log out for a browser that logged in."""
    team_q = f"team={quote(team, safe='')}" if team is not None else ""
    period_q = _period_query(label) if label else ""
    links = [("All savings opportunities", "/savings?" + "&".join(q for q in (team_q, period_q) if q)),
             ("Alerts", "/alerts" + (f"?{team_q}" if team_q else ""))]
    if COOKIE in request.cookies:
        links.append(("Log out", "/logout"))
    return [link for link in links if link[0] != leave_out]


def _asked_team(request: Request) -> str | None:
    """?team=, which a token must see; a team it may not see is refused as one that does not exist."""
    team = request.query_params.get("team")
    if team is not None and not request.state.grant.sees(team):
        raise LookupError
    return team


def _whose(grant, team: str | None) -> str:
    if team is not None:
        return f"team {team}"
    if grant.teams is None:
        return "every team"
    return ("team " if len(grant.teams) == 1 else "teams ") + ", ".join(sorted(grant.teams))


def team(request: Request) -> HTMLResponse:
    name, grant = request.path_params["team"], request.state.grant
    if not grant.sees(name):
        return HTMLResponse(NOT_FOUND, status_code=404)
    with reading(request.app.state.path) as con:
        period = _checked_period(request, con, check_report_request, name)
        if period is None:
            return HTMLResponse(NOT_FOUND, status_code=404)
        return HTMLResponse(team_report_html(con, name, *period, nav=_nav(request, name, period[2])))


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
        return HTMLResponse(org_html(report, href=lambda t, lab: f"/teams/{quote(t, safe='')}?{_period_query(lab)}",
                                     nav=_nav(request, None, label)))


def run(request: Request) -> HTMLResponse:
    """A run's whole history: a run of a team the token may not see is as missing as one never run."""
    only_params(request, set())
    run_id, grant = request.path_params["run_id"], request.state.grant
    with reading(request.app.state.path) as con:
        teams = run_teams(con, run_id)
        if not teams or not all(grant.sees(t) for t in teams):
            return HTMLResponse(NOT_FOUND, status_code=404)
        return HTMLResponse(run_report_html(con, run_id))


def savings_page(request: Request) -> HTMLResponse:
    """Every opportunity of the period the token may see, a section per team (?team=: that team's)."""
    grant = request.state.grant
    with reading(request.app.state.path) as con:
        try:
            team = _asked_team(request)
        except LookupError:
            return HTMLResponse(NOT_FOUND, status_code=404)
        check, subject = (check_report_request, (team,)) if team is not None else (check_org_request, ())
        period = _checked_period(request, con, check, *subject, also=frozenset({"team"}))
        if period is None:
            return HTMLResponse(NOT_FOUND, status_code=404)
        start, end, label = period
        found = savings.load(con, start, end, team)
    seen = [o.team for o in found.opportunities if grant.sees(o.team)]
    if team is not None:
        teams = [team]
    elif grant.teams is not None:
        teams = sorted(grant.teams)
    else:  # every team with opportunities (`_unallocated` and the like after the named ones), then no one team's
        teams = sorted({t for t in seen if t is not None}, key=lambda t: (t.startswith("_"), t))
        teams += [None] if None in seen else []
    return HTMLResponse(render_savings(split_by_team(found, teams), label, _whose(grant, team),
                                       nav=_nav(request, team, label, leave_out="All savings opportunities")))


def alerts_page(request: Request) -> HTMLResponse:
    """ops.alerts of the teams the token may see (?team=: that team's), filtered in SQL."""
    only_params(request, {"team"})
    grant = request.state.grant
    try:
        team = _asked_team(request)
    except LookupError:
        return HTMLResponse(NOT_FOUND, status_code=404)
    where, params = team_filter(grant)
    if team is not None:
        where, params = f"{where} AND team = ?", [*params, team]
    with reading(request.app.state.path) as con:
        found = load_alerts(con, where, params)
    return HTMLResponse(render_alerts(found, _whose(grant, team),
                                      nav=_nav(request, team, leave_out="Alerts")))


ROUTES = {"/": org, "/teams/{team}": team, "/users/{user}": user, "/runs/{run_id}": run,
          "/savings": savings_page, "/alerts": alerts_page}
