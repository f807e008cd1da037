"""/api/v1/: allocation (OpenCost's window and aggregate), savings, alerts, runs/{run_id}, reconciliation.
Every value is bound; aggregate dimensions come only from DIMENSIONS; every answer is filtered in SQL by
the token's teams."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.responses import JSONResponse

from pipelines.lib.warehouse import sql
from pipelines.reports.run_report import run_teams
from pipelines.serve.db import reading, rows
from pipelines.serve.windows import parse_window

# aggregate name -> column of marts.fct_cost_daily, which holds every cost of the bill
DIMENSIONS = {"team": "team", "project": "project", "category": "category", "source": "cost_source"}
# ... and of marts.fct_job_cost, which holds what jobs cost: an aggregate naming one of these is
# answered from the jobs (basis "jobs"), whose sums leave out what no job held (idle nodes, shared lines)
JOB_DIMENSIONS = {"team": "team", "project": "project", "user": "user_name", "job": "job_id", "run": "run_id",
                  "cluster": "cluster"}
MAX_ROWS = 10_000


class BadRequest(ValueError):
    pass


def only_params(request: Request, allowed: set[str]) -> None:
    """A parameter the endpoint does not take is a 400 naming it, never ignored (`?token=` too: a token
    goes in the Authorization header, never in a URL that proxies and browsers keep)."""
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        raise BadRequest(f"unknown parameter(s) {', '.join(repr(u[:40]) for u in unknown)}; "
                         f"known: {', '.join(sorted(allowed))}")
    # given twice, which one was meant is a guess (Starlette would take the last): refused by name
    repeated = sorted({k for k, _ in request.query_params.multi_items()
                       if len(request.query_params.getlist(k)) > 1})
    if repeated:
        raise BadRequest(f"parameter(s) {', '.join(repr(r[:40]) for r in repeated)} given more than once")


def team_filter(grant, column: str = "team") -> tuple[str, list]:
    """The SQL condition (and its bound value) keeping the rows of the teams `grant` may see."""
    if grant.teams is None:
        return "TRUE", []
    return f"{column} IN (SELECT unnest(?::VARCHAR[]))", [list(grant.teams)]


def allocation(request: Request) -> JSONResponse:
    only_params(request, {"window", "aggregate", "currency", "reporting"})
    q = request.query_params
    try:
        start, end = parse_window(q.get("window", "7d"), max_days=request.app.state.max_window_days)
    except ValueError as err:
        raise BadRequest(str(err)) from None
    dims = list(dict.fromkeys(d.strip() for d in q.get("aggregate", "team").split(",") if d.strip()))
    known = {**DIMENSIONS, **JOB_DIMENSIONS}
    bad = [d for d in dims if d not in known]
    if bad or not dims:
        raise BadRequest(f"aggregate {', '.join(repr(b[:40]) for b in bad) or '(empty)'} is not a dimension; "
                         f"known: {', '.join(known)}")
    by_jobs = any(d not in DIMENSIONS for d in dims)
    if by_jobs and any(d not in JOB_DIMENSIONS for d in dims):
        raise BadRequest(f"aggregate {', '.join(d for d in dims if d not in JOB_DIMENSIONS)} cannot be combined "
                         f"with {', '.join(d for d in dims if d not in DIMENSIONS)}: jobs have no category or "
                         "cost source")
    table, columns = ("marts.fct_job_cost", JOB_DIMENSIONS) if by_jobs else ("marts.fct_cost_daily", DIMENSIONS)
    reporting = q.get("reporting", "false")
    if reporting not in ("true", "false"):
        raise BadRequest("reporting must be true or false")
    cols = [columns[d] for d in dims]
    where, params = team_filter(request.state.grant)
    sql_where = f"day BETWEEN ? AND ? AND {where}"
    params = [start, end, *params]
    if "currency" in q:
        if not re.fullmatch(r"[A-Z]{3}", q["currency"]):
            raise BadRequest(f"currency {q['currency'][:40]!r} is not an ISO 4217 code (three capitals: USD, EUR)")
        sql_where += " AND billing_currency = ?"
        params.append(q["currency"])
    select = ", ".join(f"{c} AS {d}" for c, d in zip(cols, dims))
    group = ", ".join(dims)
    limit = int(request.app.state.max_rows) + 1
    if reporting == "true":
        sql = _reporting_sql(select, table, sql_where, group, limit)
    else:
        sql = (f"SELECT {select}, billing_currency, sum(effective_cost) AS effective_cost, "
               f"sum(billed_cost) AS billed_cost, sum(gpu_seconds) AS gpu_seconds FROM {table} "
               f"WHERE {sql_where} GROUP BY ALL ORDER BY {group}, billing_currency LIMIT {limit}")
    with reading(request.app.state.path) as con:
        if reporting == "true" and not con.execute("SELECT count(*) FROM finance.fx_rates").fetchone()[0]:
            raise BadRequest("reporting=true needs fx: rates in the config (docs/config.md): without them "
                             "there is no reporting currency to convert to")
        out = rows(con, sql, params)
    if len(out) > request.app.state.max_rows:
        raise BadRequest(f"the answer has more than {request.app.state.max_rows} rows: narrow the window or the aggregate")
    return JSONResponse({"window": {"start": start.isoformat(), "end": end.isoformat(), "inclusive": True},
                         "aggregate": dims, "basis": "jobs" if by_jobs else "all costs", "data": out})


def _reporting_sql(select: str, table: str, where: str, group: str, limit: int) -> str:
    """The allocation with `*_reporting` columns converted as finance.chargeback_monthly converts: each
    month's sum (of a row's group and currency) times that currency's rate for the month
    (finance.times_rate: exact, rounded once to 1e-18), then the months added. For a month window at
    chargeback's grain (team, project, category) that is chargeback's own figure; a coarser group
    converts its month sum, which differs from the sum of chargeback's rows by at most 1e-18 per row.
    A month without a rate makes the row's reporting amounts NULL, and `missing_rates` names it."""
    return f"""
        WITH months AS (
            SELECT {select}, billing_currency, strftime(day, '%Y-%m') AS month, sum(effective_cost) AS effective_cost,
                   sum(billed_cost) AS billed_cost, sum(gpu_seconds) AS gpu_seconds
            FROM {table} WHERE {where} GROUP BY ALL
        ), rated AS (
            SELECT m.*, fx.rate, (SELECT any_value(reporting_currency) FROM finance.fx_rates) AS reporting_currency
            FROM months m LEFT JOIN finance.fx_rates fx
              ON fx.currency = m.billing_currency AND (fx.month = m.month OR fx.month IS NULL)
        )
        SELECT {group}, billing_currency, sum(effective_cost) AS effective_cost, sum(billed_cost) AS billed_cost,
               sum(gpu_seconds) AS gpu_seconds, any_value(reporting_currency) AS reporting_currency,
               CASE WHEN bool_and(rate IS NOT NULL) THEN sum(finance.times_rate(effective_cost, rate)) END
                   AS effective_cost_reporting,
               CASE WHEN bool_and(rate IS NOT NULL) THEN sum(finance.times_rate(billed_cost, rate)) END
                   AS billed_cost_reporting,
               coalesce(list(DISTINCT billing_currency || ' ' || month ORDER BY billing_currency || ' ' || month)
                        FILTER (WHERE rate IS NULL), []) AS missing_rates
        FROM rated GROUP BY {group}, billing_currency ORDER BY {group}, billing_currency LIMIT {limit}"""


def savings(request: Request) -> JSONResponse:
    only_params(request, set())
    where, params = team_filter(request.state.grant)
    with reading(request.app.state.path) as con:
        out = rows(con, f"SELECT * FROM marts.fct_savings_opportunities WHERE {where} "
                        f"AND day = (SELECT max(day) FROM marts.fct_savings_opportunities) LIMIT {MAX_ROWS}", params)
    return JSONResponse({"data": out})


def alerts(request: Request) -> JSONResponse:
    only_params(request, set())
    where, params = team_filter(request.state.grant)
    with reading(request.app.state.path) as con:
        out = rows(con, f"SELECT alert_id, kind, severity, subject_type, subject, team, day, message, "
                        f"cost_at_stake, billing_currency, status, opened_at, updated_at, resolved_at "
                        f"FROM ops.alerts WHERE {where} ORDER BY opened_at DESC LIMIT {MAX_ROWS}", params)
    return JSONResponse({"data": out})


def run(request: Request) -> JSONResponse:
    only_params(request, set())
    run_id = request.path_params["run_id"]
    where, params = team_filter(request.state.grant)
    with reading(request.app.state.path) as con:
        eff = rows(con, f"SELECT * FROM marts.fct_run_efficiency_daily WHERE run_id = ? AND {where} "
                        "ORDER BY day", [run_id, *params])
        if not eff:  # another team's run answers as a missing one does
            return JSONResponse({"error": f"no run {run_id[:80]!r}"}, status_code=404)
        badput = rows(con, f"SELECT * FROM marts.fct_run_badput_daily WHERE run_id = ? AND {where} "
                           "ORDER BY day, kind", [run_id, *params])
        # the plan against actual the run's page shows (sql/reports/run_plan.sql): its spend to date is the
        # whole run's, so only a token that sees every team of the run's gets it, as only it gets the page
        plan = None
        if all(request.state.grant.sees(t) for t in run_teams(con, run_id)):
            plan = next(iter(rows(con, sql("reports/run_plan"), {"run": run_id})), None)
    if plan is not None:  # named as every other answer names a money column's currency
        plan = {"billing_currency": plan.pop("currency"), **plan}
    return JSONResponse({"run_id": run_id, "efficiency": eff, "badput": badput, "plan": plan})


def reconciliation(request: Request) -> JSONResponse:
    only_params(request, {"window"})
    if request.state.grant.teams is not None:  # the whole bill: finance's, not one team's
        return JSONResponse({"error": "not found"}, status_code=404)
    try:
        start, end = parse_window(request.query_params.get("window", "7d"), max_days=request.app.state.max_window_days)
    except ValueError as err:
        raise BadRequest(str(err)) from None
    with reading(request.app.state.path) as con:
        out = rows(con, "SELECT * FROM finance.reconciliation_daily WHERE day BETWEEN ? AND ? ORDER BY day, "
                        "billing_currency", [start, end])
    return JSONResponse({"data": out})


ROUTES = {"/api/v1/allocation": allocation, "/api/v1/savings": savings, "/api/v1/alerts": alerts,
          "/api/v1/runs/{run_id}": run, "/api/v1/reconciliation": reconciliation}


# The schema's description of the answers: each route's parameters, and its rows' fields, money ones as
# exact decimal strings ("format": "decimal"); rows carry more columns than named here (SELECT *).
PARAMS = {"/api/v1/allocation": ["window", "aggregate", "currency", "reporting"], "/api/v1/reconciliation": ["window"]}
MONEY = {"type": ["string", "null"], "format": "decimal", "description": "exact decimal, never a float"}
TEXT, NUMBER = {"type": ["string", "null"]}, {"type": ["number", "null"]}


def _rows_of(fields: dict) -> dict:
    return {"type": "array", "items": {"type": "object", "properties": fields}}


_ALLOCATION_ROW = {**{d: TEXT for d in {**DIMENSIONS, **JOB_DIMENSIONS}}, "billing_currency": TEXT,
                   "effective_cost": MONEY, "billed_cost": MONEY, "gpu_seconds": NUMBER,
                   "reporting_currency": TEXT, "effective_cost_reporting": MONEY, "billed_cost_reporting": MONEY,
                   "missing_rates": {"type": "array", "items": {"type": "string"},
                                     "description": "'<currency> <YYYY-MM>' of each month without a rate"}}
ANSWERS = {
    "/api/v1/allocation": {"window": {"type": "object"}, "aggregate": {"type": "array"}, "basis": TEXT,
                           "data": _rows_of(_ALLOCATION_ROW)},
    "/api/v1/savings": {"data": _rows_of({"kind": TEXT, "team": TEXT, "evidence": TEXT, "action": TEXT,
                                          "billing_currency": TEXT, "saving_window": MONEY, "saving_monthly": MONEY})},
    "/api/v1/alerts": {"data": _rows_of({"alert_id": TEXT, "kind": TEXT, "team": TEXT, "message": TEXT,
                                         "billing_currency": TEXT, "cost_at_stake": MONEY})},
    "/api/v1/runs/{run_id}": {
        "run_id": TEXT,
        "efficiency": _rows_of({"day": TEXT, "billing_currency": TEXT, "effective_cost": MONEY, "cost_per_mtok": MONEY,
                                "mfu_adjusted_cost_per_mtok": MONEY, "mfu_gap_cost": MONEY, "mfu": NUMBER}),
        "badput": _rows_of({"day": TEXT, "kind": TEXT, "billing_currency": TEXT, "effective_cost": MONEY,
                            "billed_cost": MONEY}),
        "plan": {"type": ["object", "null"], "properties": {
            "billing_currency": TEXT, "planned_cost": MONEY, "budget_cost": MONEY, "cost_to_date": MONEY,
            "projected_cost": MONEY, "projected_overrun_cost": MONEY, "burn_pct": NUMBER, "progress_pct": NUMBER}}},
    "/api/v1/reconciliation": {"data": _rows_of({"day": TEXT, "billing_currency": TEXT, **{
        f"{what}_{kind}": MONEY for what in ("bill", "allocated", "quarantined", "config", "difference", "rounding")
        for kind in ("effective_cost", "billed_cost")}, "unattributed_effective_cost": MONEY})},
}
ERROR = {"content": {"application/json": {"schema": {"type": "object", "required": ["error"],
                                                     "properties": {"error": {"type": "string"}}}}}}


def openapi() -> dict:
    def operation(path: str) -> dict:
        params = [{"name": n, "in": "query", "schema": {"type": "string"}} for n in PARAMS.get(path, [])]
        if "{run_id}" in path:
            params.append({"name": "run_id", "in": "path", "required": True, "schema": {"type": "string"}})
        answer = {"type": "object", "properties": ANSWERS[path]}
        return {"get": {"parameters": params, "responses": {
            "200": {"description": "JSON; money as decimal strings",
                    "content": {"application/json": {"schema": answer}}},
            "400": {"description": "a parameter is wrong: {error: a sentence naming it}", **ERROR},
            "401": {"description": "no known token", **ERROR},
            "404": {"description": "not found, or not the token's", **ERROR}}}}

    return {"openapi": "3.1.0", "info": {"title": "gpuledger", "version": "1"},
            "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
            "security": [{"bearer": []}], "paths": {p: operation(p) for p in ROUTES}}
