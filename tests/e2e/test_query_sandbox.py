"""`gpuledger query` only reads: every way out of DuckDB's read-only file is refused — by the command's
own statement check and, beneath it, by the sandboxed connection every reader gets — and the live
warehouse and the published file are byte for byte what they were."""

import hashlib
import re
import subprocess
import sys
from datetime import date

import duckdb
import pytest

from pipelines.cli import EXAMPLE_QUERIES
from pipelines.lib.warehouse.publish import FINANCE_VIEWS
from pipelines.lib.warehouse.sandbox import open_read_only, refusal
from tests.conftest import PROJECT_ROOT


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, simulated_ledger):
    root = tmp_path_factory.mktemp("sandbox")
    run = simulated_ledger
    csv = root / "some.csv"
    csv.write_text("a,b\n1,2\n")
    published = run.warehouse.with_name(f"{run.warehouse.stem}.published.duckdb")
    return run.warehouse, published, csv, root


def _query(*args):
    return subprocess.run([sys.executable, "-m", "pipelines.cli", "query", *args], capture_output=True, text=True,
                          cwd=PROJECT_ROOT)


def _digest(*paths):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _escapes(live, published, csv, root):
    """(what it tries, the SQL, what the refusal must name)."""
    return [
        ("ATTACH the live warehouse read-write, then DELETE from it",
         f"ATTACH '{live}' AS live (READ_WRITE); DELETE FROM live.marts.fct_cost_daily", "ATTACH (statement 1 of 2)"),
        ("COPY over the published file", f"COPY (SELECT 1 AS x) TO '{published}'", "COPY"),
        ("EXPORT DATABASE", f"EXPORT DATABASE '{root / 'dump'}'", "EXPORT"),
        ("INSTALL an extension", "INSTALL httpfs", "INSTALL"),
        ("LOAD an extension", "LOAD httpfs", "LOAD"),
        ("SET a setting", "SET enable_external_access = true", "SET"),
        ("RESET a setting", "RESET lock_configuration", "RESET"),
        ("PRAGMA that sets", "PRAGMA threads = 1", "PRAGMA"),
        ("read_text of /etc/passwd", "SELECT * FROM read_text('/etc/passwd')", "/etc/passwd"),
        ("read_csv of a file", f"SELECT * FROM read_csv('{csv}')", str(csv)),
        ("a file as a table", f"SELECT * FROM '{csv}'", str(csv)),
        ("glob", "SELECT * FROM glob('/etc/*')", "/etc/*"),
        ("a write smuggled after a SELECT", "SELECT 1; DELETE FROM marts.fct_cost_daily", "DELETE (statement 2 of 2)"),
        ("EXPLAIN ANALYZE runs what it explains", "EXPLAIN ANALYZE DELETE FROM marts.fct_cost_daily",
         "EXPLAIN of DELETE"),
    ]


def test_every_escape_is_refused_in_one_line_and_nothing_changes(ledger):
    live, published, csv, root = ledger
    before = _digest(live, published)
    for what, sql, named in _escapes(live, published, csv, root):
        r = _query("--warehouse", str(published), sql)
        assert r.returncode == 2, (what, r.returncode, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("query refused: "), (what, r.stderr)
        assert named in lines[0], (what, lines[0])
        assert "Traceback" not in r.stderr and r.stdout == "", what
    # the same against the live warehouse, as a tool pointed at it would
    r = _query("--warehouse", str(live), "DELETE FROM marts.fct_cost_daily")
    assert r.returncode == 2 and r.stderr.startswith("query refused: DELETE ")
    assert _digest(live, published) == before
    assert not (root / "dump").exists() and not live.with_name(live.name + ".wal").exists()


def test_the_sandbox_itself_refuses_them_without_the_statement_check(ledger):
    """Every reader of the published file (report, the restatement sensor, the report assets) gets
    this connection, with no statement check in front of it."""
    live, published, csv, root = ledger
    before = _digest(live, published)
    with open_read_only(published) as con:
        for what, sql, _ in _escapes(live, published, csv, root):
            with pytest.raises(duckdb.Error):
                con.execute(sql)
        # each part of the multi-statement escapes on its own too
        for sql in ("DELETE FROM marts.fct_cost_daily", f"ATTACH '{live}' AS live", "SET threads = 1",
                    "SET allowed_paths = ['/etc/passwd']", "CREATE TABLE marts.x AS SELECT 1"):
            with pytest.raises(duckdb.Error):
                con.execute(sql)
        assert con.execute("SELECT current_setting('enable_external_access'), "
                           "current_setting('lock_configuration')").fetchall() == [(False, True)]
        # what a reader needs still works: its own TEMP tables (the FOCUS export builds its rows in them)
        con.execute("CREATE TEMP TABLE t AS SELECT count(*) AS n FROM marts.fct_cost_daily")
        assert con.execute("SELECT n > 0 FROM t").fetchall() == [(True,)]
    assert _digest(live, published) == before


def test_readers_in_one_process_share_the_file(ledger):
    """A process that already reads the file (a notebook, a test) can still open a sandboxed
    connection, and two sandboxed ones can be open at once."""
    _, published, _, _ = ledger
    with duckdb.connect(str(published), read_only=True) as plain:
        with open_read_only(published) as first, open_read_only(published) as second:
            for con in (plain, first, second):
                assert con.execute("SELECT count(*) > 0 FROM marts.fct_cost_daily").fetchall() == [(True,)]
            with pytest.raises(duckdb.Error):
                second.execute("SELECT * FROM read_text('/etc/passwd')")


def test_a_named_output_file_is_the_only_one_it_may_write(ledger):
    live, published, csv, root = ledger
    out = root / "out.csv"
    with open_read_only(live, writable=out) as con:
        con.execute(f"COPY (SELECT 1 AS x) TO '{out}' (FORMAT csv, HEADER true)")
        with pytest.raises(duckdb.Error):
            con.execute(f"COPY (SELECT 1 AS x) TO '{root / 'other.csv'}'")
    assert out.read_text() == "x\n1\n" and not (root / "other.csv").exists()


def test_reads_keep_working(ledger):
    live, published, _, _ = ledger
    page = (PROJECT_ROOT / "docs" / "finance.md").read_text()
    finance = re.findall(r"```sql\n(.*?)```", page, re.S)
    reads = (EXAMPLE_QUERIES + finance + [f"SELECT * FROM finance.{v}" for v in FINANCE_VIEWS]
             + ["DESCRIBE marts.fct_cost_daily", "SHOW TABLES", "SUMMARIZE marts.fct_job_cost",
                "EXPLAIN SELECT * FROM marts.fct_cost_daily", "FROM marts.dim_nodes",
                "WITH t AS (SELECT team FROM marts.fct_cost_daily) SELECT count(*) FROM t", "VALUES (1)"])
    with open_read_only(published) as con:
        for sql in reads:
            assert refusal(sql) is None, sql
            con.execute(sql).fetchall()
    r = _query("--warehouse", str(published), "--csv",
               "SELECT team, sum(effective_cost) AS cost FROM marts.fct_cost_daily GROUP BY team ORDER BY team")
    assert r.returncode == 0, r.stderr
    header, *rows = r.stdout.strip().splitlines()
    assert header == "team,cost" and rows
    r = _query("--warehouse", str(published), finance[0])  # a table, as people read it
    header = r.stdout.splitlines()[1]   # the finance page's query names its columns short, to fit 80 columns
    assert r.returncode == 0 and all(f" {c} " in header for c in ("bill", "config", "allocated", "difference",
                                                                   "complete")), (r.stdout, r.stderr)
    r = _query("--warehouse", str(published), "SELECT 1; SELECT 2")
    assert r.returncode == 2 and "2 statements" in r.stderr


def test_export_focus_writes_through_the_sandbox_what_an_open_connection_would(ledger):
    """`export focus` reads the live warehouse on the sandboxed connection; its output file is the one
    it may write. The rows are those an unrestricted read-only connection exports."""
    from pipelines.exports import export_focus

    live, _, _, root = ledger
    for suffix in ("csv", "parquet"):
        out = root / f"cli.{suffix}"
        r = subprocess.run([sys.executable, "-m", "pipelines.cli", "export", "focus", "--start", "2026-11-02",
                            "--out", str(out), "--warehouse", str(live)], capture_output=True, text=True,
                           cwd=PROJECT_ROOT)
        assert r.returncode == 0, r.stderr
        plain = root / f"plain.{suffix}"
        with duckdb.connect(str(live), read_only=True) as con:
            assert export_focus(con, date(2026, 11, 2), date(2026, 11, 2), plain) > 0
        if suffix == "csv":
            assert out.read_bytes() == plain.read_bytes()
        else:
            with duckdb.connect() as con:
                assert (con.execute("SELECT * FROM read_parquet($p) ORDER BY ALL", {"p": str(out)}).fetchall()
                        == con.execute("SELECT * FROM read_parquet($p) ORDER BY ALL", {"p": str(plain)}).fetchall())


def test_csv_output_guards_text_cells_against_formulas(ledger):
    _, published, _, _ = ledger
    result = _query("--warehouse", str(published), "--csv",
                    "SELECT '=1+1+cmd|x' AS tag, '@SUM(A1)' AS other, -1.5 AS credit, 'plain' AS name")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["tag,other,credit,name", "'=1+1+cmd|x,'@SUM(A1),-1.5,plain"]
