"""The team waste report (`pipelines/reports`), on a warehouse the real pipeline built from a small
simulation; a copy of it gets hostile job names and hostnames to prove the report escapes input."""

from __future__ import annotations

import csv
import html
import io
import os
import re
import shutil
import subprocess
import sys
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pytest

from pipelines.reports import period_of, write_team_report
from pipelines.reports.data import load
from tests.conftest import PROJECT_ROOT
from tests.support.chromium import chromium_path, headless, overflows

TEAM = "pretrain"  # in this simulation it has runs, interruptions, failed jobs and idle nodes
SCRIPT = "<script>alert(1)</script>"
HOST_MARK = '"><b>bold</b>'
WASTE = ("idle_unallocated", "allocated_idle", "failed_job", "rerun_loss", "unmonitored")
GPU = WASTE + ("productive",)


@pytest.fixture(scope="module")
def ledger(simulated_ledger):
    return simulated_ledger


@pytest.fixture(scope="module")
def tampered(ledger, tmp_path_factory) -> dict:
    """A read-write copy of the warehouse where one of TEAM's wasteful jobs is named like an XSS payload
    and one of its idle nodes carries markup, plus the reports written from it."""
    folder = tmp_path_factory.mktemp("report_tampered")
    path = folder / "warehouse.duckdb"
    shutil.copy(ledger.warehouse, path)
    if Path(f"{ledger.warehouse}.wal").exists():
        shutil.copy(f"{ledger.warehouse}.wal", f"{path}.wal")
    con = duckdb.connect(str(path))
    job_uid, job_id = con.execute(
        "SELECT job_uid, any_value(job_id) FROM marts.fct_job_cost WHERE team = $team GROUP BY job_uid "
        "ORDER BY sum(failed_job_gpu_seconds + rerun_loss_gpu_seconds + allocated_idle_gpu_seconds) DESC LIMIT 1",
        {"team": TEAM}).fetchall()[0]
    con.execute("UPDATE marts.fct_job_cost SET job_name = $name WHERE job_uid = $uid", {"name": SCRIPT, "uid": job_uid})
    host = con.execute(
        "SELECT hostname FROM marts.fct_idle_waste_daily WHERE team = $team GROUP BY hostname "
        "ORDER BY sum(effective_cost) DESC LIMIT 1", {"team": TEAM}).fetchall()[0][0]
    for table in ("fct_node_hourly", "fct_idle_waste_daily"):
        con.execute(f"UPDATE marts.{table} SET hostname = $new WHERE hostname = $old",  # table: a constant above
                    {"new": host + HOST_MARK, "old": host})
    con.close()
    con = duckdb.connect(str(path), read_only=True)
    out = folder / "reports"
    start, end, label = period_of(None, "2026-11")
    paths = write_team_report(con, TEAM, start, end, label, out)
    day_paths = write_team_report(con, TEAM, *period_of("2026-11-03", None), out)
    yield {"con": con, "out": out, "paths": paths, "day_paths": day_paths, "job_id": job_id, "host": host,
           "start": start, "end": end, "html": paths[0].read_text(), "md": paths[1].read_text(),
           "csv": paths[2].read_text()}
    con.close()


# --- the period ---------------------------------------------------------------------------------

def test_period_of_day_and_month():
    assert period_of("2026-11-01", None) == (date(2026, 11, 1), date(2026, 11, 1), "2026-11-01")
    assert period_of(None, "2026-11") == (date(2026, 11, 1), date(2026, 11, 30), "2026-11")
    assert period_of(None, "2028-02") == (date(2028, 2, 1), date(2028, 2, 29), "2028-02")


@pytest.mark.parametrize("day, month, says", [
    (None, None, "give the report's period"),
    ("2026-11-01", "2026-11", "not both"),
    ("2026/11/01", None, "YYYY-MM-DD"),
    ("20261101", None, "YYYY-MM-DD"),
    ("2026-02-30", None, "not a calendar date"),
    (None, "2026-13", "months run 01 to 12"),
    (None, "Nov 2026", "YYYY-MM"),
])
def test_period_of_refuses_bad_input_with_a_clear_message(day, month, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        period_of(day, month)


def test_any_team_name_gets_its_own_folder_inside_the_report_directory(ledger, tmp_path):
    teams = ["../etc", "a/b", "", ".hidden", "x\x00y", "R&D", "R D", "é" * 128, "pretrain"]
    folders = set()
    with ledger.connect() as con:
        for team in teams:
            paths = write_team_report(con, team, date(2026, 11, 2), date(2026, 11, 2), "2026-11-02", tmp_path)
            folder = paths[0].parent
            assert folder.parent == tmp_path and all(p.parent == folder for p in paths), team
            assert len(folder.name.encode()) <= 255 and all(p.exists() for p in paths), team
            folders.add(folder.name)
    assert len(folders) == len(teams)          # no two teams share a folder
    assert "pretrain" in folders and "R D" in folders   # plain names stay as they are
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(folders)


# --- files and content --------------------------------------------------------------------------

def test_writes_html_md_csv_under_team_folder(tampered):
    out = tampered["out"]
    assert tampered["paths"] == [out / TEAM / "2026-11.html", out / TEAM / "2026-11.md", out / TEAM / "2026-11.csv"]
    assert tampered["day_paths"] == [out / TEAM / f"2026-11-03.{ext}" for ext in ("html", "md", "csv")]
    assert all(p.stat().st_size > 0 for p in tampered["paths"] + tampered["day_paths"])


def test_input_is_escaped(tampered):
    page, md = tampered["html"], tampered["md"]
    assert SCRIPT not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert '"><b>' not in page and "&quot;&gt;&lt;b&gt;" in page  # quotes too: safe inside attributes
    assert "<script" not in page.lower()  # the report runs no script of its own either
    assert SCRIPT not in md and "<b>" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    for path in tampered["day_paths"][:2]:
        assert SCRIPT not in path.read_text() and "<b>bold</b>" not in path.read_text()


def test_html_is_self_contained(tampered):
    page = tampered["html"].lower()
    assert "http://" not in page and "https://" not in page
    assert "<link" not in page and " src=" not in page and "url(" not in page and "@import" not in page


def test_report_holds_only_the_teams_rows(tampered):
    con = tampered["con"]
    p = {"team": TEAM, "start": tampered["start"], "end": tampered["end"]}

    def values(sql: str) -> set[str]:
        return {r[0] for r in con.execute(sql, p).fetchall() if r[0]}

    window = "day BETWEEN $start AND $end"
    own_jobs = values(f"SELECT job_id FROM marts.fct_job_cost WHERE team = $team AND {window}")
    other_jobs = values(f"SELECT job_id FROM marts.fct_job_cost WHERE team <> $team AND {window}") - own_jobs
    own_projects = values(f"SELECT project FROM marts.fct_cost_daily WHERE team = $team AND {window}")
    other_projects = values(f"SELECT project FROM marts.fct_cost_daily WHERE team <> $team AND {window}") - own_projects
    own_users = values(f"SELECT user_name FROM marts.fct_job_cost WHERE team = $team AND {window}")
    other_users = values(f"SELECT user_name FROM marts.fct_job_cost WHERE team <> $team AND {window}") - own_users
    # the team's own job names may contain another team's project name (a job `distill-3b` in pretrain)
    own_names = sorted(values(f"SELECT job_name FROM marts.fct_job_cost WHERE team = $team AND {window}"), key=len,
                       reverse=True)
    assert other_jobs and other_projects and other_users, "the simulation should give other teams their own rows"
    for text in (tampered["html"], tampered["md"], tampered["csv"]):
        for job_id in other_jobs:
            assert not re.search(rf"(?<![0-9]){re.escape(job_id)}(?![0-9])", text), job_id
        for own in own_names:
            text = text.replace(html.escape(own), "").replace(own, "")
        for name in other_projects | other_users:
            assert html.escape(name) not in text and name not in text, name
    assert {row["team"] for row in csv.DictReader(io.StringIO(tampered["csv"]))} == {TEAM}


def _shown_money(text: str) -> Decimal:
    sign = -1 if text.startswith("\u2212") else 1
    return sign * Decimal(text.lstrip("\u2212").lstrip("$€").replace(",", ""))


def _cents(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _blocks(page: str) -> dict[str, str]:
    """Each currency's part of the page: from its "Billed in" block to the next one (or the footer)."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r'<div class="currency" data-currency="(\w+)">', page)]
    ends = [s for s, _ in starts[1:]] + [page.index("<footer>")]
    return {c: page[s:e] for (s, c), e in zip(starts, ends)}


def test_headline_equals_the_marts_to_the_cent(tampered):
    """The simulated fleet bills TEAM in two currencies (AWS in USD for east, west's GPU cloud in EUR for its
    jobs on west): a section each, whose headline is that currency's marts sum."""
    con, page = tampered["con"], tampered["html"]
    rows = con.execute("SELECT billing_currency, category, sum(effective_cost) FROM marts.fct_cost_daily "
                       "WHERE team = $team AND day BETWEEN $start AND $end GROUP BY ALL",
                       {"team": TEAM, "start": tampered["start"], "end": tampered["end"]}).fetchall()
    report = load(con, TEAM, tampered["start"], tampered["end"], "2026-11")
    assert report.currencies == sorted({c for c, _, _ in rows}) == ["EUR", "USD"]
    assert "money in EUR and USD" in page and list(_blocks(page)) == ["EUR", "USD"]
    kpis = {(c, k): v for c, k, v in re.findall(
        r'data-currency="(\w+)" data-kpi="(\w+)"><div class="k">[^<]*</div><div class="v">([^<]*)</div>', page)}
    md = dict(zip(*[iter(re.split(r"^## Billed in (\w+)\n", tampered["md"], flags=re.M)[1:])] * 2))
    symbol = {"EUR": "€", "USD": "$"}
    for currency in report.currencies:
        by_cat = {k: v for c, k, v in rows if c == currency}
        expected = {
            "total_cost": sum(by_cat.values(), Decimal(0)),
            "gpu_cost": sum((by_cat.get(c, Decimal(0)) for c in GPU), Decimal(0)),
            "waste_cost": sum((by_cat.get(c, Decimal(0)) for c in WASTE), Decimal(0)),
        }
        for key, value in expected.items():
            shown = html.unescape(kpis[(currency, key)])
            assert symbol[currency] in shown and _shown_money(shown) == _cents(value), (currency, key)
        kinds = dict(re.findall(r'data-kind="(\w+)">.*?<td class="n waste">([^<]*)</td>', _blocks(page)[currency]))
        assert set(kinds) == set(WASTE)
        for kind in WASTE:
            assert _shown_money(html.unescape(kinds[kind])) == _cents(by_cat.get(kind, Decimal(0))), (currency, kind)
        # The numbers behind the page are the exact DECIMAL sums, not just equal once rounded.
        data = report.section(currency)
        assert data.total_cost == expected["total_cost"] and data.waste_cost == expected["waste_cost"]
        text = md[currency].replace("\\$", "$")
        assert f"**Total cost:** {symbol[currency]}{_cents(expected['total_cost']):,}" in text


def test_csv_is_exact_decimal_and_sums_to_the_total_per_currency(tampered):
    rows = list(csv.DictReader(io.StringIO(tampered["csv"])))
    assert rows and list(rows[0]) == ["day", "team", "project", "category", "billing_currency", "gpu_seconds",
                                      "effective_cost", "billed_cost"]
    assert all(re.fullmatch(r"-?\d+\.\d{18}", r["effective_cost"]) for r in rows)  # no float, no exponent
    totals = dict(tampered["con"].execute(
        "SELECT billing_currency, sum(effective_cost) FROM marts.fct_cost_daily "
        "WHERE team = $team AND day BETWEEN $start AND $end GROUP BY 1",
        {"team": TEAM, "start": tampered["start"], "end": tampered["end"]}).fetchall())
    assert set(totals) == {r["billing_currency"] for r in rows} == {"EUR", "USD"}
    for currency, total in totals.items():
        assert sum((Decimal(r["effective_cost"]) for r in rows if r["billing_currency"] == currency), Decimal(0)) == total


def test_team_without_data_gets_a_report_that_says_so(tampered, tmp_path):
    paths = write_team_report(tampered["con"], "no_such_team", date(2026, 11, 2), date(2026, 11, 2), "2026-11-02", tmp_path)
    assert "No cost recorded" in paths[0].read_text() and "No cost recorded" in paths[1].read_text()
    paths = write_team_report(tampered["con"], TEAM, *period_of("2026-12-01", None), tmp_path)
    assert "No cost recorded" in paths[0].read_text()
    assert paths[2].read_text().strip() == ("day,team,project,category,billing_currency,gpu_seconds,effective_cost,"
                                            "billed_cost")


# --- rendered by a real browser (tests/support/chromium.py) ------------------------------------

def test_headless_chromium_renders_the_report(tampered, tmp_path):
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed: make system-deps")
    page = tampered["paths"][0]
    png = tmp_path / "report.png"
    shot = headless(chromium, tmp_path / "profile-shot", f"--screenshot={png}", f"file://{page}")
    assert png.exists() and png.stat().st_size > 10_000, shot.stderr[-2000:]
    dom = headless(chromium, tmp_path / "profile-dom", "--dump-dom", f"file://{page}").stdout

    svgs = re.findall(r"<svg\b.*?</svg>", dom, flags=re.S)
    assert len(svgs) >= 4, f"{len(svgs)} charts rendered"
    assert all(re.search(r"<(rect|path|polyline)\b", s) for s in svgs)
    assert sum(len(re.findall(r"<rect\b", s)) for s in svgs) > 50  # bars and heatmap cells, not just frames
    assert "<script" not in dom.lower()  # the job name stayed text: no element was injected, nothing ran
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom and "<b>bold</b>" not in dom

    artifact = PROJECT_ROOT / "data" / "test-artifacts" / f"waste_report_{TEAM}.png"
    artifact.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(png, artifact)
    print(f"screenshot: {artifact}")


def test_the_overflow_probe_finds_a_cut_column_and_a_clipped_label(tmp_path):
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed: make system-deps")
    page = ('<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'
            '</head><body><div class="scroll" style="overflow-x:auto;width:300px"><table><tr>'
            + "<td style='white-space:nowrap'>a wide cell that cannot wrap</td>" * 4 + "</tr></table></div>"
            '<svg viewBox="0 0 100 20" width="100"><text x="90" y="15">€0.69 (at target €0.54)</text></svg></body></html>')
    found = overflows(chromium, page, 900, tmp_path)
    assert any("div.scroll" in f and "hides" in f for f in found), found
    assert any(f.startswith('label "€0.69 (at target €0.54)"') for f in found), found


@pytest.mark.parametrize("width", [1400, 900])
def test_nothing_overflows_at_1400_and_900_px(tampered, tmp_path, width):
    """At both widths every table shows all of its columns, nothing runs past its container and every
    chart label is inside its chart (measured by Chromium's own layout and text widths); the
    screenshots are kept to look at."""
    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed: make system-deps")
    page = tampered["html"]
    # the widest tables are in it: interruptions (10 columns), runs (11), plan against actual (9)
    assert all(h in page for h in ("<h2>Work lost to interruptions</h2>", "<h2>Training runs</h2>",
                                   "<h2>Plan against actual</h2>"))
    assert overflows(chromium, page, width, tmp_path) == []
    artifact = PROJECT_ROOT / "data" / "test-artifacts" / f"waste_report_{TEAM}_{width}px.png"
    artifact.parent.mkdir(parents=True, exist_ok=True)
    shot = headless(chromium, tmp_path / "profile-shot", f"--screenshot={artifact}", f"file://{tampered['paths'][0]}",
                     width=width, height=5000)
    assert artifact.exists() and artifact.stat().st_size > 10_000, shot.stderr[-2000:]
    print(f"screenshot: {artifact}")


def test_warehouse_without_marts_gets_a_clear_error(tmp_path):
    with duckdb.connect() as con, pytest.raises(RuntimeError, match="run `gpuledger run`"):
        write_team_report(con, TEAM, date(2026, 11, 2), date(2026, 11, 2), "2026-11-02", tmp_path)


def test_the_daily_run_writes_each_configured_teams_report(ledger):
    reports = ledger.root / "reports"
    written = sorted(p.relative_to(reports).as_posix() for p in reports.rglob("*.html"))
    assert written == [f"{t}/{d}.html" for t in ("inference", "posttrain", "pretrain", "research")
                       for d in ("2026-11-02", "2026-11-03")]


def test_make_demo_writes_a_month_report_for_every_month_its_days_touch(ledger, tmp_path):
    """`make demo` covers October 29 to November 4, so its reports are October's and November's
    (the Makefile's demo-reports target), listed both; here on a copy of the ledger whose first day
    is moved to October 31, one team kept so few reports are written."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    warehouse = tmp_path / "w.published.duckdb"
    shutil.copy(ledger.warehouse.with_name("warehouse.published.duckdb"), warehouse)
    with duckdb.connect(str(warehouse)) as con:
        con.execute("DELETE FROM marts.fct_cost_daily WHERE team <> $team", {"team": TEAM})
        con.execute("UPDATE marts.fct_cost_daily SET day = DATE '2026-10-31' WHERE day = DATE '2026-11-02'")
    bin_dir = tmp_path / "bin"   # the checkout's CLI, as the venv's gpuledger would run it
    bin_dir.mkdir()
    shim = bin_dir / "gpuledger"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{PROJECT_ROOT}" exec "{sys.executable}" -m pipelines.cli "$@"\n')
    shim.chmod(0o755)
    done = subprocess.run([make, "-f", str(PROJECT_ROOT / "Makefile"), "--no-print-directory", "demo-reports",
                           f"BIN={bin_dir}", "START=2026-10-31", "DAYS=4"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "GPULEDGER_WAREHOUSE": str(tmp_path / "w.duckdb")})
    assert done.returncode == 0, done.stderr
    listed = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("data/")]
    assert listed == [f"data/reports/{TEAM}/2026-10.html", f"data/reports/{TEAM}/2026-11.html"], done.stdout
    # the organisation's page, written after them (it links them) and listed first
    paths = [line.strip() for line in done.stdout.splitlines() if "data/reports/" in line]
    assert paths[0] == "Organisation: data/reports/index.html", done.stdout
    assert f'href="{TEAM}/2026-10.html"' in (tmp_path / "data" / "reports" / "index.html").read_text()
    assert all((tmp_path / p).stat().st_size > 0 for p in listed)
    assert "October 2026" in (tmp_path / listed[0]).read_text()


def test_each_runs_badput_is_a_stacked_bar_in_money(tampered):
    """Every badput kind of every run the team's month has is a bar segment whose tip gives its cost."""
    from pipelines.reports.fmt import money
    from pipelines.reports.html_charts import BADPUT_KINDS

    labels = dict(BADPUT_KINDS)
    rows = tampered["con"].execute(
        "SELECT run_id, kind, billing_currency, sum(effective_cost) FROM marts.fct_run_badput_daily "
        "WHERE team = $team AND day BETWEEN $start AND $end AND kind <> 'goodput' AND billing_currency IS NOT NULL "
        "GROUP BY ALL HAVING sum(effective_cost) <> 0",
        {"team": TEAM, "start": tampered["start"], "end": tampered["end"]}).fetchall()
    assert rows, "the simulation should give the team a run with badput"
    assert 'data-section="badput"' in tampered["html"]
    for run, kind, currency, cost in rows:
        assert html.escape(f"{run} · {labels[kind]}: {money(cost, currency)}") in tampered["html"], (run, kind)
