"""The gpuledger command end to end, as a user types it."""

import re
import subprocess
import sys

import duckdb

from tests.support.pipeline import pipeline_env


def _gpuledger(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_simulate_run_and_query(tmp_path):
    sim = _gpuledger("simulate", "--out", str(tmp_path / "sim"), "--start", "2026-11-02", "--days", "1", "--nodes", "2")
    assert sim.returncode == 0, sim.stderr
    assert "focus" in sim.stdout and "slurm" in sim.stdout
    # two bills, their money shown apart: west's GPU cloud in EUR, AWS in USD
    assert re.search(r"EUR effective_cost \d+\.\d+", sim.stdout) and re.search(r"USD effective_cost \d+\.\d+", sim.stdout)

    warehouse = tmp_path / "w.duckdb"
    home = tmp_path / "dagster_home"
    home.mkdir()
    env_run = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "run", "--landing", str(tmp_path / "sim" / "landing"),
         "--config", str(tmp_path / "sim" / "gpuledger.yaml"), "--warehouse", str(warehouse), "--start", "2026-11-02"],
        capture_output=True, text=True, env={**__import__("os").environ, "DAGSTER_HOME": str(home)},
    )
    assert env_run.returncode == 0, env_run.stderr[-2000:]
    assert "cost and waste per team" in env_run.stdout
    # the team table's _unallocated row, the largest waste line of a fleet with unowned pools, is explained
    assert "_unallocated" not in env_run.stdout.split("cost and waste per team")[1].split("next, try")[0] \
        or "_unallocated is what no team owns" in env_run.stdout
    assert "gpuledger query" in env_run.stdout  # the queries to try next
    from pipelines.cli import EXAMPLE_QUERIES

    with duckdb.connect(str(warehouse.with_name(f"{warehouse.stem}.published.duckdb")), read_only=True) as con:
        for suggested in EXAMPLE_QUERIES:    # each runs, and shows money only beside its currency
            columns = [d[0] for d in con.execute(suggested).description]
            assert "billing_currency" in columns or not any("cost" in c for c in columns), suggested

    q = _gpuledger("query", "--warehouse", str(warehouse), "--csv",
                   "SELECT count(*) AS n, sum(effective_cost) > 0 AS paid FROM marts.fct_cost_daily")
    assert q.returncode == 0, q.stderr
    header, row = q.stdout.strip().splitlines()
    assert header == "n,paid" and row.split(",")[1] == "true"


def test_query_refuses_writes_and_reports_bad_sql(simulated_ledger):
    run = simulated_ledger
    write = _gpuledger("query", "--warehouse", str(run.warehouse), "DELETE FROM marts.fct_cost_daily")
    assert write.returncode == 2 and write.stderr.startswith("query refused: DELETE is not a statement that only reads")
    bad = _gpuledger("query", "--warehouse", str(run.warehouse), "SELEC 1")
    assert bad.returncode == 1 and "query failed" in bad.stderr
    with run.connect() as con:
        assert con.execute("SELECT count(*) FROM marts.fct_cost_daily").fetchall()[0][0] > 0


def test_run_rejects_a_missing_landing_dir(tmp_path):
    with pipeline_env(tmp_path, tmp_path / "w.duckdb", None):
        r = _gpuledger("run", "--landing", str(tmp_path / "nope"), "--start", "2026-11-02")
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_report_command_writes_the_three_files(tmp_path, simulated_ledger):
    run = simulated_ledger
    published = run.warehouse.with_name(f"{run.warehouse.stem}.published.duckdb")
    ok = _gpuledger("report", "--team", "pretrain", "--day", "2026-11-02", "--warehouse", str(published),
                    "--out", str(tmp_path / "out"))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split() == [str(tmp_path / "out" / "pretrain" / f"2026-11-02.{ext}") for ext in ("html", "md", "csv")]
    bad = _gpuledger("report", "--team", "pretrain", "--month", "2026-13", "--warehouse", str(published))
    assert bad.returncode == 2 and "report failed" in bad.stderr


def test_report_run_writes_the_page_serve_shows(tmp_path, simulated_ledger):
    from pipelines.reports.run_report import run_report_html

    published = simulated_ledger.warehouse.with_name(f"{simulated_ledger.warehouse.stem}.published.duckdb")
    with duckdb.connect(str(published), read_only=True) as con:
        run_id = con.execute("SELECT min(run_id) FROM marts.fct_run_efficiency_daily").fetchone()[0]
        page = run_report_html(con, run_id)
    ok = _gpuledger("report", "--run", run_id, "--warehouse", str(published), "--out", str(tmp_path / "out"))
    assert ok.returncode == 0, ok.stderr
    written = tmp_path / "out" / "_runs" / f"{run_id}.html"
    assert ok.stdout.split() == [str(written)] and written.read_text() == page  # one builder, one page
    typo = _gpuledger("report", "--run", run_id[:-1] + "x", "--warehouse", str(published), "--out", str(tmp_path / "t"))
    assert typo.returncode == 2 and f"did you mean {run_id!r}?" in typo.stderr and not (tmp_path / "t").exists()
    both = _gpuledger("report", "--run", run_id, "--day", "2026-11-02", "--warehouse", str(published))
    assert both.returncode == 2 and "whole history" in both.stderr
    neither = _gpuledger("report", "--team", "pretrain", "--warehouse", str(published))
    assert neither.returncode == 2 and "--day YYYY-MM-DD or --month YYYY-MM" in neither.stderr


def test_a_report_of_a_team_or_day_the_ledger_lacks_is_refused_naming_what_it_has(tmp_path, simulated_ledger):
    published = simulated_ledger.warehouse.with_name(f"{simulated_ledger.warehouse.stem}.published.duckdb")
    typo = _gpuledger("report", "--team", "pretrian", "--day", "2026-11-02", "--warehouse", str(published),
                      "--out", str(tmp_path))
    assert typo.returncode == 2
    assert typo.stderr.strip() == "report failed: no team 'pretrian' in the ledger — did you mean 'pretrain'?"
    unknown = _gpuledger("report", "--team", "zzz", "--day", "2026-11-02", "--warehouse", str(published))
    assert unknown.returncode == 2 and "no team 'zzz' in the ledger; it has: " in unknown.stderr
    assert "pretrain" in unknown.stderr
    outside = _gpuledger("report", "--team", "pretrain", "--day", "2026-12-01", "--warehouse", str(published),
                         "--out", str(tmp_path))
    assert outside.returncode == 2
    assert outside.stderr.strip() == ("report failed: team 'pretrain' has no ledger day in 2026-12-01: its days run "
                                      "from 2026-11-02 to 2026-11-03")
    assert not any(tmp_path.iterdir())  # no report of nothing


def test_every_command_words_a_bad_date_the_same_way_and_says_its_version():
    wording = "day '11/01/2026' is not a date written YYYY-MM-DD, e.g. 2026-11-01"
    for args in (("run", "--landing", ".", "--start", "11/01/2026"), ("report", "--team", "t", "--day", "11/01/2026"),
                 ("export", "focus", "--start", "11/01/2026", "--out", "x.csv"),
                 ("simulate", "--out", "x", "--start", "11/01/2026", "--days", "1"),
                 ("collect", "dcgm", "--landing", ".", "--start", "11/01/2026")):
        out = _gpuledger(*args)
        assert out.returncode == 2 and wording in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)
    version = _gpuledger("--version")
    assert version.returncode == 0 and re.fullmatch(r"gpuledger \d+\.\d+\.\d+\S*\n", version.stdout)


def test_a_reader_that_closes_the_pipe_ends_every_command_quietly(simulated_ledger):
    published = simulated_ledger.warehouse.with_name(f"{simulated_ledger.warehouse.stem}.published.duckdb")
    for args in (("query", "--warehouse", str(published), "SELECT * FROM marts.fct_cost_daily"),
                 ("query", "--csv", "--warehouse", str(published), "SELECT * FROM marts.fct_cost_daily"),
                 ("alerts", "--warehouse", str(published))):
        proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        proc.stdout.close()   # `| head` gone before the first line
        err = proc.stderr.read()
        assert proc.wait() == 141 and err == "", (args, err)


def test_run_takes_the_config_from_gpuledger_config_like_every_command(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("idle: {min_stretch_minutes: -5}\n")
    env = {**__import__("os").environ, "GPULEDGER_CONFIG": str(bad)}
    for args in (("run", "--landing", str(tmp_path), "--start", "2026-11-02"),
                 ("inspect", "--landing", str(tmp_path)), ("plan", str(bad))):
        out = subprocess.run([sys.executable, "-m", "pipelines.cli", *args], capture_output=True, text=True, env=env)
        assert out.returncode == 2 and f"{bad}:1" in out.stderr and "min_stretch_minutes" in out.stderr, (args, out.stderr)
