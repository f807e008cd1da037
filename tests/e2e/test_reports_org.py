"""The organisation's page (`gpuledger report --org`, pipelines/reports/org.py) and the team reports'
"What to do" (pipelines/reports/savings.py).

Utilisation, hand-computed on one day, 2026-11-02, two nodes of 8 GPUs:

- h1 in cluster c1, billed 00:00–10:00 (80 GPU-hours): job 9001 busy on it 00:00–04:00 (32 GPU-hours
  productive), job 9002 holding it idle 04:00–05:00 (8 GPU-hours allocated_idle), no job 05:00–10:00
  (40 GPU-hours idle_unallocated). Allocated = (32 + 8) / 80 = 50.0 %, productive = 32 / 80 = 40.0 %,
  idle = (40 + 8) / 80 = 60.0 %.
- h2 in cluster c2, billed 00:00–04:00 (32 GPU-hours), job 9003 busy all of it: 100.0 %, 100.0 %, 0.0 %.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from datetime import date
from decimal import Decimal as D

import duckdb
import pytest

from pipelines.reports import savings, write_team_report
from pipelines.reports.org import load
from pipelines.reports.org_page import write_org_report
from pipelines.reports.period import period_of
from tests.conftest import PROJECT_ROOT
from tests.support.chromium import chromium_path, headless, overflows
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

NOV2 = date(2026, 11, 2)
HOUR = 3600.0


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("org_small"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "clusters": {"c1": {"timezone": "UTC"}, "c2": {"timezone": "UTC"}}}
    L.node("h1", cluster="c1"), L.node("h2", cluster="c2")
    L.node_hours("h1", utc(2026, 11, 2, 0), 10, D("10.00"))
    L.node_hours("h2", utc(2026, 11, 2, 0), 4, D("10.00"))
    L.job("c1", "9001", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T04:00:00",
          state="COMPLETED", host="h1", name="train")
    L.job("c1", "9002", account="acct1", start="2026-11-02T04:00:00", end="2026-11-02T05:00:00",
          state="COMPLETED", host="h1", name="<b>stuck</b>")
    L.job("c2", "9003", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T04:00:00",
          state="COMPLETED", host="h2", name="eval")
    L.telemetry("h1", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 4), "9001", True),
                               Activity(utc(2026, 11, 2, 4), utc(2026, 11, 2, 5), "9002", False)])
    L.telemetry("h2", [NOV2], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 4), "9003", True)])
    L.write()
    failed = run_pipeline(L.landing, L.warehouse, L.config_path, [NOV2])
    assert not failed, failed
    con = duckdb.connect(str(L.warehouse), read_only=True)
    yield con, L.root
    con.close()


def test_utilisation_shares_are_the_hand_computed_ones(small, tmp_path):
    con, _ = small
    r = load(con, NOV2, NOV2, "2026-11-02", tmp_path)
    got = {u.cluster: (u.billed / HOUR, u.allocated / HOUR, u.productive / HOUR, u.idle / HOUR) for u in r.utilisation}
    assert got == {"c1": pytest.approx((80.0, 40.0, 32.0, 48.0), abs=0.02),
                   "c2": pytest.approx((32.0, 32.0, 32.0, 0.0), abs=0.02)}
    paths = write_org_report(con, NOV2, NOV2, "2026-11-02", tmp_path)
    assert paths == [tmp_path / "index.html", tmp_path / "index.md"]
    page, md = (p.read_text() for p in paths)
    for text in (page, md):
        assert re.search(r"c1\W+80\.0\W+50\.0%\W+40\.0%\W+60\.0%", re.sub(r"<[^>]+>", " ", text)), "c1 shares"
        assert re.search(r"c2\W+32\.0\W+100\.0%\W+100\.0%\W+0\.0%", re.sub(r"<[^>]+>", " ", text)), "c2 shares"
        assert "idle = idle with no job plus held by a job at 0 % activity" in html.unescape(text).replace("\\_", "_")
    # a day report's charts cover the 7 days ending on it: one per cluster
    assert page.count('aria-label="Utilisation of c') == 2


def test_org_page_sums_each_currency_and_links_the_team_reports(small, tmp_path):
    con, _ = small
    team = write_team_report(con, "ml", NOV2, NOV2, "2026-11-02", tmp_path)
    page = write_org_report(con, NOV2, NOV2, "2026-11-02", tmp_path)[0].read_text()
    total = con.execute("SELECT sum(effective_cost) FROM marts.fct_cost_daily WHERE team = 'ml'").fetchone()[0]
    assert f"${total.quantize(D('0.01')):,}" in page
    assert '<a href="ml/2026-11-02.html">2026-11-02</a>' in page and team[0].exists()
    assert "<b>stuck</b>" not in page  # nothing from input unescaped (the job name is on no org row anyway)


def test_a_team_without_opportunities_says_so_in_one_line_first(small, tmp_path):
    con, _ = small
    paths = write_team_report(con, "ml", NOV2, NOV2, "2026-11-02", tmp_path)
    page, md = paths[0].read_text(), paths[1].read_text()
    s = savings.load(con, NOV2, NOV2, "ml")
    assert s.available and s.opportunities == []
    body = page[page.index("</header>"):]
    assert body.index("<section") == body.index('<section data-section="what-to-do">')
    section = body[:body.index("</section>")]
    assert "No savings opportunities for team ml" in section and "<table" not in section  # one line, no table
    assert re.findall(r"^## .*", md, flags=re.M)[0] == "## What to do"
    assert "No savings opportunities for team ml" in md


def test_cli_refuses_a_day_without_ledger_and_a_bad_day(small, tmp_path):
    _, root = small
    warehouse = root / "warehouse.duckdb"
    for args, says in ((["--day", "2026-12-01"], "the ledger has no day in 2026-12-01"),
                       (["--day", "2026-11-31"], "not a calendar date"), (["--month", "2026-13"], "01 to 12")):
        done = subprocess.run([sys.executable, "-m", "pipelines.cli", "report", "--org", *args, "--warehouse",
                               str(warehouse), "--out", str(tmp_path)], cwd=PROJECT_ROOT, capture_output=True, text=True)
        assert done.returncode == 2 and says in done.stderr, done.stderr
    assert not (tmp_path / "index.html").exists()


# --- on the simulated fleet: opportunities exist ---------------------------------------------------

@pytest.fixture(scope="module")
def fleet(simulated_ledger, tmp_path_factory):
    out = tmp_path_factory.mktemp("org_fleet")
    con = simulated_ledger.connect()
    start, end, label = period_of(None, "2026-11")
    team = write_team_report(con, "pretrain", start, end, label, out)
    org = write_org_report(con, start, end, label, out)
    yield {"con": con, "out": out, "team": team, "org": org, "start": start, "end": end}
    con.close()


def test_what_to_do_is_first_and_largest_first(fleet):
    con = fleet["con"]
    rows = con.execute("SELECT action, saving_window FROM marts.fct_savings_opportunities WHERE team = 'pretrain' "
                       "AND day = (SELECT max(day) FROM marts.fct_savings_opportunities WHERE day <= $e) "
                       "ORDER BY saving_window DESC", {"e": fleet["end"]}).fetchall()
    assert rows, "the simulated fleet should give pretrain a savings opportunity"
    page, md = fleet["team"][0].read_text(), fleet["team"][1].read_text()
    body = page[page.index("</header>"):]
    assert re.match(r'</header>(<p class="summary"[^>]*>[^<]*</p>)?<section data-section="what-to-do">', body)
    assert md.index("## What to do") < md.index("Where the waste went")
    shown = re.findall(r'<td class="wrap action">([^<]*)</td>', page)
    assert shown[0] == html.escape(rows[0][0]) and len(shown) == min(len(rows), savings.SHOWN)
    amounts = [D(a.replace(",", "")) for a in re.findall(
        r'<td class="wrap action">.*?<td class="n">[$€]([\d,.]+)', page)]
    assert amounts == sorted(amounts, reverse=True)


def test_org_top_savings_and_team_rows_add_up(fleet):
    con = fleet["con"]
    r = load(con, fleet["start"], fleet["end"], "2026-11", fleet["out"])
    assert r.savings.opportunities and r.links["pretrain"] == ["2026-11"]
    for t in r.teams:
        want = sum((o.saving_window for o in r.savings.opportunities
                    if o.team == t.team and o.billing_currency == t.currency), D(0))
        assert t.saving_window == want
    md = fleet["org"][1].read_text()
    assert "[2026-11](pretrain/2026-11.md)" in md and "## Top savings" in md


@pytest.mark.parametrize("width", [1400, 900])
def test_org_page_and_team_report_fit_in_chromium(fleet, tmp_path, width):
    """No page wider than the window, no table column cut, no chart label outside its chart, at both
    widths; the screenshots are kept for a person to look at."""
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed: make system-deps")
    for name, path in (("org_index", fleet["org"][0]), ("team_pretrain_what_to_do", fleet["team"][0])):
        (tmp_path / name).mkdir()
        assert overflows(chromium, path.read_text(), width, tmp_path / name) == [], name
        artifact = PROJECT_ROOT / "data" / "test-artifacts" / f"{name}_{width}px.png"
        artifact.parent.mkdir(parents=True, exist_ok=True)
        shot = headless(chromium, tmp_path / f"profile-{name}", f"--screenshot={artifact}", f"file://{path}",
                         width=width, height=3000)
        assert artifact.exists() and artifact.stat().st_size > 10_000, shot.stderr[-2000:]
        print(f"screenshot: {artifact}")
