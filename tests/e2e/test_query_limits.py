"""`gpuledger query` within its limits — time, memory, rows — on a file whose contents it never
trusts, and never in the way of a run (docs/operations.md#query-limits)."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import PROJECT_ROOT

# 10^14 rows that no optimizer shortcuts (a count(*) of a cross join is answered without the rows):
# 10^10 took 40 s on two cores here but finished inside the 2 s limit on a CI machine of many cores
CROSS_JOIN = "SELECT max(a.range + b.range) AS m FROM range(10000000) a, range(10000000) b"


def _query(*args, env=None):
    return subprocess.run([sys.executable, "-m", "pipelines.cli", "query", *map(str, args)], capture_output=True,
                          text=True, cwd=PROJECT_ROOT, env={**os.environ, **(env or {})})


@pytest.fixture
def small(tmp_path):
    """A warehouse file of one table, published-like: no lock file beside it."""
    path = tmp_path / "w.published.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA marts; CREATE TABLE marts.t AS SELECT range AS x FROM range(5)")
    return path


def _config(tmp_path, text):
    path = tmp_path / "gpuledger.yaml"
    path.write_text(text)
    return path


def test_a_cross_join_stops_at_its_time_limit_in_one_sentence(small, tmp_path):
    began = time.monotonic()
    r = _query("--warehouse", small, "--timeout", "2", CROSS_JOIN)
    took = time.monotonic() - began
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert r.stderr.strip() == "query stopped after 2 s (--timeout); narrow it or raise the limit"
    assert r.stdout == "" and took < 12, took  # interrupted at 2 s, Python's start-up aside
    # the config's limit, named as such
    r = _query("--warehouse", small, "--config", _config(tmp_path, "query:\n  timeout_seconds: 1\n"), CROSS_JOIN)
    assert r.returncode == 3
    assert r.stderr.strip() == "query stopped after 1 s (query.timeout_seconds); narrow it or raise the limit"


def test_a_query_needing_more_memory_than_its_limit_fails_with_a_sentence(small, tmp_path):
    needs = "SELECT list(range) AS l FROM range(100000000)"  # one list of 10^8 values: ~800 MB, unspillable
    r = _query("--warehouse", small, "--config", _config(tmp_path, "query:\n  memory_limit: 64MB\n"), needs)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert r.stderr.strip() == ("query stopped: it needs more memory than its limit of 64MB (query.memory_limit); "
                                "narrow it or raise the limit")
    # $GPULEDGER_MEMORY_LIMIT caps the config's limit (here the default, 2GB) ...
    r = _query("--warehouse", small, needs, env={"GPULEDGER_MEMORY_LIMIT": "48MB"})
    assert r.returncode == 3 and "its limit of 48MB ($GPULEDGER_MEMORY_LIMIT)" in r.stderr, r.stderr
    # ... and never raises it
    r = _query("--warehouse", small, "--config", _config(tmp_path, "query:\n  memory_limit: 64MB\n"), needs,
               env={"GPULEDGER_MEMORY_LIMIT": "8GB"})
    assert r.returncode == 3 and "its limit of 64MB (query.memory_limit)" in r.stderr, r.stderr
    r = _query("--warehouse", small, "SELECT 1", env={"GPULEDGER_MEMORY_LIMIT": "lots"})
    assert r.returncode == 2 and r.stderr.strip() == (
        "$GPULEDGER_MEMORY_LIMIT='lots' is not a memory size: a number and a unit, e.g. 2GB")


def test_a_huge_result_is_cut_at_the_row_limit_and_says_so(small, tmp_path):
    """`SELECT * FROM range(5e8)` took 8.4 GB converted whole; fetching stops past the limit."""
    began = time.monotonic()
    r = _query("--warehouse", small, "--csv", "--max-rows", "1000", "SELECT * FROM range(500000000)")
    assert r.returncode == 3, r.stderr
    header, *rows = r.stdout.splitlines()
    assert header == "range" and rows == [str(i) for i in range(1000)]
    assert r.stderr.strip() == ("query result cut at its first 1,000 rows (--max-rows); the query has more: "
                                "narrow it or raise the limit")
    assert time.monotonic() - began < 12
    # a result of exactly the limit is whole
    r = _query("--warehouse", small, "--csv", "--config", _config(tmp_path, "query:\n  max_rows: 5\n"),
               "SELECT x FROM marts.t")
    assert r.returncode == 0 and r.stdout.splitlines() == ["x", "0", "1", "2", "3", "4"] and r.stderr == ""
    r = _query("--warehouse", small, "--config", _config(tmp_path, "query:\n  max_rows: 4\n"), "SELECT x FROM marts.t")
    assert r.returncode == 3 and "first 4 rows (query.max_rows)" in r.stderr


def test_bad_limits_are_refused_naming_them(small, tmp_path):
    r = _query("--warehouse", small, "--timeout", "0", "SELECT 1")
    assert r.returncode == 2 and "argument --timeout: 0 is not a number above 0" in r.stderr
    r = _query("--warehouse", small, "--timeout", "nan", "SELECT 1")
    assert r.returncode == 2 and "argument --timeout: nan is not a number above 0" in r.stderr
    r = _query("--warehouse", small, "--max-rows", "many", "SELECT 1")
    assert r.returncode == 2 and "argument --max-rows: 'many' is not a whole number" in r.stderr
    r = _query("--warehouse", small, "--config", _config(tmp_path, "query:\n  memory_limit: plenty\n"), "SELECT 1")
    assert r.returncode == 2 and "query.memory_limit" in r.stderr and "'plenty' is not a memory size" in r.stderr


def _hostile(tmp_path):
    """A DuckDB file anyone could hand a reader: its ops.parquet_roots lets in `/` and a folder of secrets."""
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT 'hunter2' AS password) TO '{secrets / 'p.parquet'}'")
    (secrets / "s.csv").write_text("password\nhunter2\n")
    path = tmp_path / "hostile.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA ops; CREATE TABLE ops.parquet_roots (root VARCHAR PRIMARY KEY)")
        con.execute("INSERT INTO ops.parquet_roots VALUES ('/'), ($s)", {"s": str(secrets)})
        con.execute(f"CREATE VIEW ops.leak AS SELECT * FROM read_parquet('{secrets / 'p.parquet'}')")
    return path, secrets


def test_the_sandbox_takes_its_roots_from_the_config_never_from_the_file(tmp_path, capsys):
    from pipelines.lib.warehouse.sandbox import open_read_only

    path, secrets = _hostile(tmp_path)
    escapes = ["SELECT * FROM read_text('/etc/passwd')", "SELECT * FROM read_csv('/etc/passwd')",
               "SELECT * FROM glob('/etc/*')", f"SELECT * FROM '{secrets}/s.csv'",
               f"SELECT * FROM read_csv('{secrets}/s.csv')",
               f"SELECT * FROM read_parquet('{secrets}/*.parquet')", "SELECT * FROM ops.leak"]
    with open_read_only(path) as con:
        for sql in escapes:
            with pytest.raises(duckdb.PermissionException):
                con.execute(sql).fetchall()
    from pipelines.cli import main

    for sql in escapes:  # the command, in this process: a subprocess each would take seconds
        code = main(["query", "--warehouse", str(path), sql])
        out, err = capsys.readouterr()
        assert code == 2 and err.startswith("query refused: a SELECT that reaches outside the warehouse: "), (sql, err)
        assert "hunter2" not in out and "root:" not in out, sql


def test_the_parquet_a_spark_warehouse_reads_stays_readable(tmp_path):
    """What the roots are for: the marts of a Spark run are views over Parquet under `<warehouse>.spark/`
    (beside the file, or the config's spark.root); that Parquet is read, a sibling folder is not."""
    for root, config in ((tmp_path / "w.spark", None),
                         (tmp_path / "elsewhere", _config(tmp_path, f"spark:\n  root: {tmp_path / 'elsewhere'}\n"))):
        (root / "marts").mkdir(parents=True, exist_ok=True)
        sibling = tmp_path / f"{root.name}-other"
        sibling.mkdir(exist_ok=True)
        path = tmp_path / "w.published.duckdb"
        path.unlink(missing_ok=True)
        with duckdb.connect(str(path)) as con:
            for folder in (root / "marts", sibling):
                con.execute(f"COPY (SELECT 7 AS n) TO '{folder / 'x.parquet'}'")
            con.execute("CREATE SCHEMA marts")
            con.execute(f"CREATE VIEW marts.mine AS SELECT * FROM read_parquet('{root}/marts/*.parquet')")
            con.execute(f"CREATE VIEW marts.other AS SELECT * FROM read_parquet('{sibling}/*.parquet')")
        given = ["--config", config] if config else []
        r = _query("--warehouse", path, "--csv", *given, "SELECT n FROM marts.mine")
        assert r.returncode == 0 and r.stdout.splitlines() == ["n", "7"], r.stderr
        r = _query("--warehouse", path, *given, "SELECT n FROM marts.other")
        assert r.returncode == 2 and "reaches outside the warehouse" in r.stderr, r.stderr


def _opened_under(proc: subprocess.Popen, folder: Path, limit: float = 120) -> Path:
    """The first file under `folder` that `proc` holds open (its /proc/<pid>/fd), waited for: the moment
    a query has opened the copy it reads is seen, not guessed with a sleep, which a loaded machine
    (two test workers, a Spark JVM) outlasts."""
    deadline = time.monotonic() + limit
    fds = Path(f"/proc/{proc.pid}/fd")
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for fd in fds.iterdir():
            try:
                target = Path(os.readlink(fd))
            except OSError:  # closed meanwhile
                continue
            if target.is_relative_to(folder) and target.suffix == ".duckdb":
                return target
        time.sleep(0.05)
    raise AssertionError(f"the query opened nothing under {folder} within {limit:.0f} s")


def test_a_run_started_during_a_long_query_on_the_live_file_succeeds(simulated_ledger, tmp_path):
    """A query held open on the live warehouse (in a process of its own, as a person's would be) does not
    make the next run fail with DuckDB's "Conflicting lock": it reads a copy, which SIGTERM removes."""
    from tests.support.pipeline import run_pipeline

    live = tmp_path / "warehouse.duckdb"
    shutil.copyfile(simulated_ledger.warehouse, live)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "GPULEDGER_WAREHOUSE": str(live), "TMPDIR": str(scratch)}
    query = subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "query", "--warehouse", str(live), "--timeout", "300",
         "SELECT max(a.range + b.range + c.cost) FROM range(10000000) a, range(10000000) b, "
         "(SELECT count(*) AS cost FROM marts.fct_cost_daily) c"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=PROJECT_ROOT, env=env)
    try:
        copy = _opened_under(query, scratch)  # started, and opened what it reads
        assert query.poll() is None, query.communicate()
        assert copy.name == "warehouse.duckdb" and copy.parent.name.startswith("gpuledger-query-")
        assert [p.name for p in scratch.glob("gpuledger-query-*/*")] == ["warehouse.duckdb"]  # the copy it reads
        failed = run_pipeline(simulated_ledger.landing, live, simulated_ledger.config, simulated_ledger.days[:1])
        assert not failed, failed
        assert query.poll() is None  # the query was running all along
        query.terminate()
        assert query.wait(timeout=20) == 128 + 15 and "stopped by SIGTERM" in query.communicate()[1]
        assert not list(scratch.iterdir())  # the copy went with it
    finally:
        query.kill()
        query.wait()


def test_a_query_on_the_live_file_waits_for_a_writing_run_no_longer_than_its_time_limit(small, tmp_path):
    from pipelines.lib.warehouse.writer_lock import warehouse_lock

    live = tmp_path / "w.duckdb"
    shutil.copyfile(small, live)
    with warehouse_lock(live, run_id="run-7"):
        r = _query("--warehouse", live, "--timeout", "1", "SELECT count(*) FROM marts.t")
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith(
        f"query stopped after waiting 1 s (--timeout) to read the live warehouse: the warehouse lock ({live}) "
        "is held by run run-7 (pid ")
    r = _query("--warehouse", live, "--csv", "SELECT count(*) AS n FROM marts.t")
    assert r.returncode == 0 and r.stdout.splitlines() == ["n", "5"], r.stderr


def test_the_sandbox_lets_through_the_root_the_spark_engine_writes(tmp_path, monkeypatch):
    """lib may not import the engine, so the sandbox restates its rule: the two must agree."""
    from pipelines.engines.spark.daily import spark_root
    from pipelines.lib.config import load_config
    from pipelines.lib.warehouse.sandbox import allowed_roots

    monkeypatch.setenv("GPULEDGER_WAREHOUSE", str(tmp_path / "live" / "w.duckdb"))
    for cfg in (load_config(None), load_config(_config(tmp_path, f"spark:\n  root: {tmp_path / 'pq'}\n"))):
        roots = allowed_roots(tmp_path / "elsewhere" / "x.published.duckdb", cfg)
        assert roots == sorted({f"{spark_root(cfg)}/", f"{tmp_path / 'elsewhere' / 'x.spark'}/"})
