import os
from pathlib import Path

import pytest

# Tests build many landing zones in one process, but Dagster's daily partitions are defined once, when
# the definitions first load: start them early enough for every test's days. The CLI, run as a
# subprocess, fixes the start from its own landing zone (tests/e2e/test_ledger_days.py).
os.environ["GPULEDGER_LEDGER_START"] = "2000-01-01"

PROJECT_ROOT = Path(__file__).resolve().parents[1]
# Real public samples live beside the project in ../shared (never copied in); a user's clone has none.
REAL = PROJECT_ROOT.parent / "shared" / "data" / "real"


@pytest.fixture
def real() -> Path:
    if not REAL.is_dir():
        pytest.skip("../shared/data/real is not present in this checkout")
    return REAL


@pytest.fixture(scope="session")
def simulated_ledger(tmp_path_factory):
    """One simulated fleet run through the pipeline once per test session (2 days, 4 nodes, seed 5),
    shared by the tests that only read a ledger: reports, the FOCUS export, the query sandbox, the CLI.
    A test that changes a warehouse copies it first."""
    from datetime import date

    from tests.support.pipeline import simulate_and_run

    return simulate_and_run(tmp_path_factory.mktemp("simulated_ledger"), date(2026, 11, 2), 2, 4, seed=5)
