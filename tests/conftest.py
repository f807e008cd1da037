import os
import tempfile
from pathlib import Path

import pytest

# Tests build many landing zones in one process, but Dagster's daily partitions are defined once, when
# the definitions first load: start them early enough for every test's days. The CLI, run as a
# subprocess, fixes the start from its own landing zone (tests/e2e/test_ledger_days.py).
os.environ["GPULEDGER_LEDGER_START"] = "2000-01-01"
# What gpuledger keeps between runs (the Spark SQL of each statement) is kept for the tests apart from
# the user's own ~/.cache, shared by the test workers and the commands they start.
os.environ.setdefault("GPULEDGER_CACHE", str(Path(tempfile.gettempdir()) / f"gpuledger-test-cache-{os.getuid()}"))
# The tests' JVMs (Spark's driver, a standalone master, worker and executors) live a few minutes on
# tiny data: the quick JIT tier alone and one GC thread do their work with a quarter less CPU, which
# the other test worker has meanwhile (measured: one Spark day 89 % → 65 % of two cores, same time).
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# The commands the tests start (`python -m pipelines.cli`, `python -c`) import this checkout's code
# wherever they run: from another cwd, an editable install may name another clone or worktree (one
# .venv shared by several worktrees names the one it was installed from), whose code is not under test.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
# Real public samples live beside the project in ../shared (never copied in); a user's clone has none.
REAL = PROJECT_ROOT.parent / "shared" / "data" / "real"


@pytest.fixture
def real() -> Path:
    if not REAL.is_dir():
        pytest.skip("../shared/data/real is not present in this checkout")
    return REAL


@pytest.fixture(scope="session")
def new_warehouse(tmp_path_factory):
    """Opens a new bootstrapped warehouse at a path: a copy of one bootstrapped once per test session
    (bootstrapping a file takes about half a second; a test drawing many examples makes one each)."""
    import shutil

    from pipelines.lib.warehouse import bootstrap, connect

    template = tmp_path_factory.mktemp("bootstrapped") / "warehouse.duckdb"
    con = connect(template)
    bootstrap(con)
    con.close()

    def new(path: Path):
        shutil.copyfile(template, path)
        con = connect(path)
        bootstrap(con)  # one query: the copy answers this version's digest
        return con

    return new


@pytest.fixture(scope="session")
def simulated_ledger(tmp_path_factory):
    """One simulated fleet run through the pipeline once per test session (2 days, 4 nodes, seed 5),
    shared by the tests that only read a ledger: reports, the FOCUS export, the query sandbox, the CLI.
    A test that changes a warehouse copies it first."""
    from datetime import date

    from tests.support.pipeline import simulate_and_run

    return simulate_and_run(tmp_path_factory.mktemp("simulated_ledger"), date(2026, 11, 2), 2, 4, seed=5)


# How `make test` shares the files between its workers (pytest-xdist, `--dist loadfile
# --no-loadscope-reorder`): a file's tests stay on one worker, so what a module builds once is built
# once; the two Spark files share a worker, one after the other (two JVMs at once on two cores were
# slower); and the longest files go out first — Spark's, then those with `slow` tests — so the suite
# does not end on one worker running a long file alone while the other has nothing left. (xdist's
# `loadgroup` would say the same with marks, but does not group under pytest 9: it renames node ids.)
SPARK_FILES = {"test_spark_equal.py", "test_spark_cluster.py"}


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByFileSparkTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "spark" if path.rsplit("/", 1)[-1] in SPARK_FILES else path

    return ByFileSparkTogether(config, log)


def pytest_collection_modifyitems(config, items):
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}

    def rank(item) -> int:
        return 0 if item.path.name in SPARK_FILES else 1 if item.path in slow_files else 2

    items.sort(key=rank)  # stable: a file's tests keep their order, and stay together
