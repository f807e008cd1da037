"""`gpuledger serve` as users meet it: the real server (uvicorn, in a subprocess) on 127.0.0.1 over a copy of
the simulated ledger's published warehouse, with tokens for finance (`*`) and for one team; answers checked
against the finance views to the cent; a real Prometheus scraping /metrics."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from tests.support.chromium import chromium_path, headless, overflows
from tests.support.prometheus import _free_port, missing_binaries
from tests.support.serve_server import fetch, send, start_server

pytestmark = pytest.mark.world
ROOT = Path(__file__).resolve().parents[2]
FINANCE, TEAM_A = "finance-token-xyz", "team-a-token-abc"


@pytest.fixture(scope="module")
def server(simulated_ledger, tmp_path_factory):
    work = tmp_path_factory.mktemp("serve")
    published = work / "warehouse.published.duckdb"
    shutil.copy(simulated_ledger.warehouse.with_name("warehouse.published.duckdb"), published)
    with duckdb.connect(str(published), read_only=True) as con:
        teams = [r[0] for r in con.execute("SELECT DISTINCT team FROM marts.fct_cost_daily WHERE team NOT LIKE '\\_%' "
                                           "ESCAPE '\\' ORDER BY 1").fetchall()]
    team_a, team_b = teams[0], teams[1]
    config = work / "gpuledger.yaml"
    config.write_text(simulated_ledger.config.read_text() + "\nserve:\n  tokens:\n"
                      f"    - {{name: finance, sha256: {hashlib.sha256(FINANCE.encode()).hexdigest()}, teams: '*'}}\n"
                      f"    - {{name: a, sha256: {hashlib.sha256(TEAM_A.encode()).hexdigest()}, teams: [{team_a}]}}\n")
    url, proc, log = start_server(work, published, config)
    yield {"url": url, "published": published, "a": team_a, "b": team_b, "work": work, "proc": proc,
           "config": config}
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0, "serve did not stop cleanly on SIGTERM"
    log.close()
    text = (work / "serve.log").read_text()
    assert FINANCE not in text and TEAM_A not in text, "a token was logged"
    assert "Traceback" not in text


def get(server, path, token=FINANCE):
    return fetch(server["url"] + path, {"Authorization": f"Bearer {token}"} if token else {})


def api(server, path, token=FINANCE):
    status, body = get(server, path, token)
    assert status == 200, body
    return json.loads(body)


def test_allocation_equals_the_finance_views_to_the_cent(server):
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        monthly = defaultdict(Decimal)
        for team, cur, cost in con.execute("SELECT team, billing_currency, sum(effective_cost) FROM "
                                           "finance.chargeback_monthly WHERE month = '2026-11' GROUP BY ALL").fetchall():
            monthly[(team, cur)] = cost
        got = api(server, "/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team")["data"]
        assert {(r["team"], r["billing_currency"]): Decimal(r["effective_cost"]) for r in got} == dict(monthly)
        for window, start, end in (("2026-11-02,2026-11-02", "2026-11-02", "2026-11-02"),
                                   ("2026-11-02,2026-11-03", "2026-11-02", "2026-11-03")):
            for agg in ("team,project,category", "category", "project,source"):
                cols = agg.replace("source", "cost_source")
                want = {tuple(str(v) for v in r[:-1]): r[-1] for r in con.execute(
                    f"SELECT {cols}, billing_currency, sum(effective_cost) FROM marts.fct_cost_daily "
                    "WHERE day BETWEEN ? AND ? GROUP BY ALL", [start, end]).fetchall()}
                got = api(server, f"/api/v1/allocation?window={window}&aggregate={agg}")["data"]
                assert {tuple(str(r[k]) for k in [*agg.split(","), "billing_currency"]): Decimal(r["effective_cost"])
                        for r in got} == want, (window, agg)
                assert all(isinstance(r["effective_cost"], str) for r in got)  # money as decimal strings


def test_reporting_amounts_equal_chargeback_monthlys_to_the_cent(server):
    """The window is the month and the aggregate chargeback's grain, so each row's month sum converts at
    the month's rate exactly as the view converts it: equal to the last digit, not only to the cent."""
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        want = {(t, p, c, cur): (e, b, rc) for t, p, c, cur, e, b, rc in con.execute(
            "SELECT team, project, category, billing_currency, effective_cost_reporting, billed_cost_reporting, "
            "reporting_currency FROM finance.chargeback_monthly WHERE month = '2026-11'").fetchall()}
    assert any(k[3] != v[2] for k, v in want.items()), "the simulated ledger bills in a second currency"
    got = api(server, "/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team,project,category&reporting=true")
    rows = {(r["team"], r["project"], r["category"], r["billing_currency"]): r for r in got["data"]}
    assert rows.keys() == want.keys()
    for key, (effective, billed, currency) in want.items():
        r = rows[key]
        assert isinstance(r["effective_cost_reporting"], str) and r["missing_rates"] == []
        assert (Decimal(r["effective_cost_reporting"]), Decimal(r["billed_cost_reporting"]),
                r["reporting_currency"]) == (effective, billed, currency), key
    # a coarser aggregate converts its own month sums: equal to the sum of chargeback's rows to the cent
    by_team = api(server, "/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team&reporting=true")["data"]
    for r in by_team:
        chargeback = sum(v[0] for k, v in want.items() if (k[0], k[3]) == (r["team"], r["billing_currency"]))
        assert abs(Decimal(r["effective_cost_reporting"]) - chargeback) < Decimal("0.005")


def test_a_month_without_a_rate_is_null_and_named_never_zero(server, tmp_path):
    """The EUR rate taken out of a copy of the warehouse: EUR rows have no reporting amount and say which
    rate is missing; USD rows still convert (at the identity)."""
    published = tmp_path / "no-eur-rate.duckdb"
    shutil.copy(server["published"], published)
    with duckdb.connect(str(published)) as con:
        con.execute("DELETE FROM finance.fx_rates WHERE currency = 'EUR'")
    url, proc, log = start_server(tmp_path, published, server["config"], "serve-no-eur")
    try:
        got = api({"url": url}, "/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team&reporting=true")["data"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        log.close()
    eur = [r for r in got if r["billing_currency"] == "EUR"]
    usd = [r for r in got if r["billing_currency"] == "USD"]
    assert eur and usd
    assert all(r["effective_cost_reporting"] is None and r["billed_cost_reporting"] is None
               and r["missing_rates"] == ["EUR 2026-11"] for r in eur)
    assert all(r["effective_cost_reporting"] == r["effective_cost"] and r["missing_rates"] == [] for r in usd)


def test_allocation_by_user_job_run_and_cluster_equals_the_jobs_cost(server):
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        for agg, cols in (("user", "user_name"), ("team,run", "team, run_id"), ("cluster,job", "cluster, job_id")):
            want = {tuple(str(v) for v in r[:-1]): r[-1] for r in con.execute(
                f"SELECT {cols}, billing_currency, sum(effective_cost) FROM marts.fct_job_cost "
                "WHERE day BETWEEN '2026-11-01' AND '2026-11-30' GROUP BY ALL").fetchall()}
            answer = api(server, f"/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate={agg}")
            assert answer["basis"] == "jobs"
            assert {tuple(str(r[k]) for k in [*agg.split(","), "billing_currency"]): Decimal(r["effective_cost"])
                    for r in answer["data"]} == want, agg
        a_users = api(server, "/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team,user", TEAM_A)["data"]
        assert a_users and {r["team"] for r in a_users} == {server["a"]}
    status, body = get(server, "/api/v1/allocation?aggregate=user,category")
    assert status == 400 and b"cannot be combined" in body


def test_every_api_route_is_in_the_openapi_schema_and_pages_answer(server):
    from pipelines.serve.api import ROUTES
    schema = api(server, "/api/v1/openapi.json", token=None)
    assert set(ROUTES) <= set(schema["paths"])
    for page in ("/", f"/teams/{server['a']}", f"/teams/{server['b']}?month=2026-11",
                 "/api/v1/savings", "/api/v1/alerts", "/api/v1/reconciliation?window=2026-11-01,2026-11-30"):
        status, body = get(server, page)
        assert status == 200, (page, body[:300])


def test_a_runs_answer_has_its_plan_against_actual(server):
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        planned = con.execute("SELECT run_id, budget_cost, cost_to_date, burn_pct, day FROM marts.fct_run_budget_daily "
                              "QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY day DESC) = 1").fetchall()
        unplanned = con.execute("SELECT min(run_id) FROM marts.fct_run_efficiency_daily WHERE run_id NOT IN "
                                "(SELECT run_id FROM marts.dim_run_plans)").fetchone()[0]
    assert planned, "the simulated ledger has a planned run"
    for run_id, budget, to_date, burn, day in planned:
        plan = api(server, f"/api/v1/runs/{urllib.parse.quote(run_id)}")["plan"]
        assert (Decimal(plan["budget_cost"]), Decimal(plan["cost_to_date"]), plan["burn_pct"], plan["day"]) == \
            (budget, to_date, burn, day.isoformat())
        assert isinstance(plan["cost_to_date"], str) and plan["billing_currency"]
    if unplanned is not None:  # the simulated fleet plans each of its runs
        assert api(server, f"/api/v1/runs/{urllib.parse.quote(unplanned)}")["plan"] is None


def test_no_token_is_refused(server):
    """A program is refused with a 401 JSON; a browser opening a page without a token is sent to /login."""
    for path in ("/api/v1/allocation", "/metrics", "/api/v1/runs/x"):
        status, body = get(server, path, token=None)
        assert status == 401 and "error" in json.loads(body)
    for path in ("/", "/api/v1/allocation", "/metrics", f"/teams/{server['a']}", "/savings"):
        assert get(server, path, token="wrong")[0] == 401
    for path in ("/", f"/teams/{server['a']}", "/savings", "/alerts", "/runs/x"):
        status, headers, _ = send(server["url"] + path)
        assert (status, headers["Location"]) == (303, "/login"), path


def _log_in(server, token: str) -> tuple[int, dict, bytes]:
    return send(server["url"] + "/login", {"Content-Type": "application/x-www-form-urlencoded"},
                urllib.parse.urlencode({"token": token}).encode())


def test_a_browser_logs_in_with_a_form_and_a_session_cookie(server):
    status, _, form = send(server["url"] + "/login")
    assert status == 200 and b'<form method="post" action="/login">' in form and b"<script" not in form
    status, _, body = _log_in(server, "not-a-token")
    assert status == 401 and b"not known" in body
    status, headers, _ = _log_in(server, TEAM_A)
    assert (status, headers["Location"]) == (303, f"/teams/{server['a']}")  # a one-team token: its team's page
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Secure" not in cookie  # http on loopback
    session = cookie.split(";")[0]
    name, value = session.split("=", 1)
    assert name == "gpuledger_session" and TEAM_A not in value and hashlib.sha256(TEAM_A.encode()).hexdigest() not in value
    with_cookie = {"Cookie": session}
    status, _, page = send(server["url"] + f"/teams/{server['a']}", with_cookie)
    assert status == 200 and f"Team {server['a']}".encode() in page
    assert send(server["url"] + f"/teams/{server['b']}", with_cookie)[0] == 404  # the token's teams, still
    assert send(server["url"] + "/api/v1/alerts", with_cookie)[0] == 200
    assert _log_in(server, FINANCE)[1]["Location"] == "/"  # a `*` token: the organisation's overview
    # behind a TLS proxy on this host (uvicorn trusts 127.0.0.1's X-Forwarded-Proto): the cookie is Secure
    status, headers, _ = send(server["url"] + "/login", {"Content-Type": "application/x-www-form-urlencoded",
                                                          "X-Forwarded-Proto": "https"},
                              urllib.parse.urlencode({"token": TEAM_A}).encode())
    assert status == 303 and "Secure" in headers["Set-Cookie"]
    status, headers, _ = send(server["url"] + "/logout", with_cookie)
    assert (status, headers["Location"]) == (303, "/login") and "Max-Age=0" in headers["Set-Cookie"]
    assert send(server["url"] + f"/teams/{server['a']}", with_cookie)[0] == 303  # the session is over
    assert send(server["url"] + "/login", {"Content-Type": "application/x-www-form-urlencoded"},
                b"token=" + b"x" * 5000)[0] == 400
    log = (server["work"] / "serve.log").read_text()
    assert value not in log and TEAM_A not in log and FINANCE not in log


def test_a_team_token_sees_its_team_only(server):
    a, b = server["a"], server["b"]
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        # a run of any team but A's (the simulated fleet's runs are one team's)
        b_run = con.execute("SELECT run_id FROM marts.fct_run_efficiency_daily WHERE team <> ? LIMIT 1", [a]).fetchone()
        b_user = con.execute("SELECT user_name FROM marts.fct_user_cost_daily WHERE team = ? AND user_name NOT IN "
                             "(SELECT user_name FROM marts.fct_user_cost_daily WHERE team = ?) LIMIT 1", [b, a]).fetchone()
    missing = get(server, "/teams/no-such-team", TEAM_A)
    assert get(server, f"/teams/{b}", TEAM_A) == missing and missing[0] == 404
    assert get(server, f"/teams/{a}", TEAM_A)[0] == 200
    assert b_run, "the simulated ledger has a run of another team than A's"
    assert get(server, f"/api/v1/runs/{urllib.parse.quote(b_run[0])}", TEAM_A)[0] == 404
    assert get(server, f"/api/v1/runs/{urllib.parse.quote(b_run[0])}")[0] == 200
    assert get(server, f"/runs/{urllib.parse.quote(b_run[0])}", TEAM_A) == get(server, "/runs/no-such-run", TEAM_A)
    assert get(server, f"/runs/{urllib.parse.quote(b_run[0])}")[0] == 200
    if b_user:
        assert get(server, f"/users/{urllib.parse.quote(b_user[0])}", TEAM_A)[0] == 404
    assert get(server, "/", TEAM_A)[0] == 404  # every team's overview is finance's
    assert get(server, "/api/v1/reconciliation", TEAM_A)[0] == 404
    for path in ("/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team,project",
                 "/api/v1/alerts", "/api/v1/savings"):
        rows = api(server, path, TEAM_A)["data"]
        assert {r["team"] for r in rows} <= {a}, path
    metrics = get(server, "/metrics", TEAM_A)[1].decode()
    assert f'team="{b}"' not in metrics and f'team="{a}"' in metrics


def test_metrics_say_when_the_last_run_wrote_a_day_and_how_it_left_it(server):
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        day, status, at = con.execute("SELECT day, status, epoch(updated_at) FROM ops.ledger_days "
                                      "ORDER BY updated_at DESC, day DESC LIMIT 1").fetchone()
    metrics = get(server, "/metrics")[1].decode()
    assert f'gpuledger_last_run_status{{day="{day}",status="{status}"}} 1.0' in metrics
    stamp = [line.split()[-1] for line in metrics.splitlines() if line.startswith("gpuledger_last_run_timestamp")]
    assert stamp and abs(float(stamp[0]) - at) < 1e-3


def test_savings_and_alerts_pages_show_the_tokens_teams_only(server):
    a, b = server["a"], server["b"]
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        a_alert = con.execute("SELECT subject FROM ops.alerts WHERE team = ? LIMIT 1", [a]).fetchone()
        b_alert = con.execute("SELECT subject FROM ops.alerts WHERE team = ? LIMIT 1", [b]).fetchone()
        a_saving = con.execute("SELECT evidence FROM marts.fct_savings_opportunities WHERE team = ? AND day = "
                               "(SELECT max(day) FROM marts.fct_savings_opportunities) LIMIT 1", [a]).fetchone()
    assert a_alert and b_alert and a_saving, "the simulated ledger has alerts of A's and B's and savings of A's"
    from html import escape
    for path in ("/savings", "/alerts", f"/savings?team={a}", f"/alerts?team={a}"):
        status, body = get(server, path, TEAM_A)
        assert status == 200, (path, body[:300])
        text = body.decode()
        assert f"Team {b}" not in text and f">{b}<" not in text, path  # no section, no cell of B's
    assert escape(a_alert[0]) in get(server, "/alerts", TEAM_A)[1].decode()
    assert escape(a_saving[0]) in get(server, "/savings", TEAM_A)[1].decode()
    # another team's page is as missing as a team that does not exist; a `*` token sees every team
    for path in (f"/savings?team={b}", f"/alerts?team={b}"):
        assert get(server, path, TEAM_A)[0] == 404
        assert get(server, path)[0] == 200
    assert escape(b_alert[0]) in get(server, "/alerts")[1].decode()
    assert get(server, "/savings?team=no-such-team")[0] == 404
    assert get(server, "/savings?month=2026-13")[0] == 400
    assert get(server, "/alerts?bogus=1")[0] == 400
    # linked from the team's page and the overview, with the period
    assert f'href="/savings?team={a}&amp;month=2026-11"' in get(server, f"/teams/{a}?month=2026-11", TEAM_A)[1].decode()
    assert 'href="/alerts"' in get(server, "/")[1].decode()


@pytest.mark.parametrize("query", ["aggregate=team;drop", "window=../../etc", "window=1000000d",
                                   "window=2020-01-01,2026-01-01", "aggregate=team'--", "window=2026-02-30,2026-03-01",
                                   "bogus=1", "reporting=maybe"])
def test_hostile_parameters_are_a_400_naming_them(server, query):
    status, body = get(server, f"/api/v1/allocation?{query}")
    assert status == 400, body
    assert "error" in json.loads(body) and b"Traceback" not in body


def test_a_quote_in_a_team_name_is_a_404_not_an_error(server):
    assert get(server, "/teams/o'brien")[0] == 404


def test_a_publish_during_100_requests_leaves_every_answer_whole(server):
    path = "/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team"
    whole = api(server, path)
    published, results = server["published"], []

    def ask():
        for _ in range(50):
            results.append(get(server, path))

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(5):  # the way publish.py does it: a new file renamed over the old one
        tmp = published.with_name(f".next-{i}.duckdb")
        shutil.copy(published, tmp)
        os.replace(tmp, published)
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert len(results) == 100
    assert all(s == 200 and json.loads(b) == whole for s, b in results)


@pytest.mark.skipif(bool(missing_binaries()), reason="prometheus is not installed (make system-deps)")
def test_prometheus_scrapes_the_month_to_date_cost_per_team(server):
    work = server["work"] / "prom"
    work.mkdir()
    port = _free_port()
    host = server["url"].removeprefix("http://")
    (work / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gpuledger\n"
        f"    authorization: {{credentials: {FINANCE}}}\n    static_configs: [{{targets: ['{host}']}}]\n")
    log = (work / "prometheus.log").open("wb")
    proc = subprocess.Popen(["prometheus", f"--config.file={work / 'prometheus.yml'}",
                             f"--storage.tsdb.path={work / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        q = urllib.parse.quote("sum by (team, currency) (gpuledger_month_to_date_cost)")
        deadline, result = time.monotonic() + 60, []
        while not result:
            assert time.monotonic() < deadline, (work / "prometheus.log").read_text()[-2000:]
            time.sleep(0.5)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?query={q}", timeout=5) as r:
                    result = json.loads(r.read())["data"]["result"]
            except OSError:
                pass
        got = {(m["metric"]["team"], m["metric"]["currency"]): Decimal(m["value"][1]).quantize(Decimal("0.01"))
               for m in result}
        with duckdb.connect(str(server["published"]), read_only=True) as con:
            want = {(t, c): v.quantize(Decimal("0.01")) for t, c, v in con.execute(
                "SELECT team, billing_currency, sum(effective_cost) FROM finance.chargeback_monthly "
                "WHERE month = '2026-11' GROUP BY ALL").fetchall()}
        assert got == want
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


@pytest.mark.parametrize("page", ["/", "/teams/{a}?month=2026-11", "/runs/{a_run}", "/savings", "/alerts",
                                  "/alerts?team={a}"])
def test_a_served_page_renders_in_chromium_and_nothing_runs_past_its_box(server, page, tmp_path):
    """Headless Chromium cannot send a bearer token, so the page is fetched over HTTP with one and the
    served HTML laid out from a file: a screenshot, the charts in the DOM, the overflow probe at 1280 px."""
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed: make system-deps")
    with duckdb.connect(str(server["published"]), read_only=True) as con:
        a_run = con.execute("SELECT min(run_id) FROM marts.fct_run_efficiency_daily").fetchone()[0]
    assert a_run is not None, "the simulated ledger has runs"
    status, body = get(server, page.format(a=server["a"], a_run=urllib.parse.quote(a_run)))
    assert status == 200
    served = tmp_path / "page.html"
    served.write_bytes(body)
    png = tmp_path / "page.png"
    shot = headless(chromium, tmp_path / "profile-shot", f"--screenshot={png}", f"file://{served}", width=1280)
    assert png.exists() and png.stat().st_size > 10_000, shot.stderr[-2000:]
    dom = headless(chromium, tmp_path / "profile-dom", "--dump-dom", f"file://{served}").stdout
    if "/runs/" in page:  # a run's page is tables: its days, where its GPU time went, its plan
        assert dom.count("<table") >= 2 and "Where the GPU time went" in dom
    elif page.startswith(("/savings", "/alerts")):  # tables of what to act on, or a sentence saying why none
        assert dom.count("<table") >= 1 and all(
            "<table" in part or 'class="empty"' in part for part in dom.split("<section")[1:]), "a section says nothing"
    else:
        assert re.search(r"<svg\b.*?<rect\b", dom, flags=re.S), "no chart was drawn"
    assert "/teams/" in dom or page != "/", "the organisation page links no team page"
    assert overflows(chromium, body.decode(), 1280, tmp_path) == []
    if page.startswith(("/savings", "/alerts")):  # a team lead's phone: nothing runs past its box there either
        assert overflows(chromium, body.decode(), 640, tmp_path) == []


def test_a_team_lead_logs_in_in_chromium_and_sees_the_team_page(server, tmp_path):
    """The browser as a team lead uses it: /login's form filled in and sent, the cookie kept, the team's
    page shown; a screenshot of each step."""
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed: make system-deps")
    pytest.importorskip("websockets.sync.client")
    from tests.support.chromium import DevTools

    with DevTools(chromium, tmp_path / "profile") as tab:
        tab.open(server["url"] + f"/teams/{server['a']}")  # no cookie yet: sent to the form
        assert tab.evaluate("location.pathname") == "/login"
        tab.screenshot(tmp_path / "login.png")
        tab.events.clear()
        tab.evaluate(f"document.getElementById('token').value = {json.dumps(TEAM_A)}; document.forms[0].submit()")
        tab.wait_for_load()
        assert tab.evaluate("location.pathname") == f"/teams/{server['a']}"
        assert tab.evaluate("document.querySelector('h1').textContent").startswith(f"Team {server['a']}")
        assert tab.evaluate("document.cookie") == ""  # HttpOnly: no script on the page can read it
        assert tab.evaluate("[...document.querySelectorAll('nav a')].map(a => a.textContent)")[-1] == "Log out"
        tab.screenshot(tmp_path / "team.png")
        tab.open(server["url"] + f"/teams/{server['b']}")
        assert tab.evaluate("document.querySelector('h1').textContent") == "Not found"
    assert (tmp_path / "team.png").stat().st_size > 10_000
