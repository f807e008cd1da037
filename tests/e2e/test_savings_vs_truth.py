"""marts.fct_savings_opportunities against the simulator's own truth (truth/savings.csv, simulator/savings.py):
the GPU-seconds of each opportunity the simulator knows exactly, over the whole simulated window."""

import csv
import json
from collections import defaultdict

import duckdb
import pytest

# the ledger's truth tolerance elsewhere (telemetry has 30 s samples, minute rollups)
REL = 0.002
KINDS = ("cancel_hung_jobs", "idle_session_timeout", "right_size", "release_nodes")


def _truth(root) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(dict)
    with (root / "truth" / "savings.csv").open() as fh:
        for r in csv.DictReader(fh):
            assert r["subject"] not in out[r["kind"]], r     # a subject once per kind
            out[r["kind"]][r["subject"]] = float(r["gpu_seconds"])
    return out


def _mart(warehouse, day) -> dict[str, dict[str, float]]:
    """The last day's rows (its window covers the whole simulation), per kind and subject. right_size
    only for the GPUs a job never used: a job whose memory fits a smaller GPU is one the truth does not
    price (its gpu_hours are then the job's productive hours)."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            """SELECT kind, subject, gpu_hours, details, days_covered, window_days
               FROM marts.fct_savings_opportunities WHERE day = ? AND kind IN ? ORDER BY ALL""",
            [day, list(KINDS)]).fetchall()
    for kind, subject, gpu_hours, details, covered, window in rows:
        assert covered <= window
        if kind == "right_size" and not json.loads(details)["gpus_never_active"]:
            continue
        assert subject not in out[kind], (kind, subject)     # one row per subject (one currency each)
        out[kind][subject] = gpu_hours * 3600
    return out


@pytest.fixture(scope="module")
def both(simulated_ledger):
    last = simulated_ledger.days[-1]
    return _truth(simulated_ledger.root), _mart(simulated_ledger.warehouse, last), len(simulated_ledger.days)


def test_the_window_covers_the_whole_simulation(simulated_ledger):
    with duckdb.connect(str(simulated_ledger.warehouse), read_only=True) as con:
        covered = con.execute("SELECT DISTINCT days_covered FROM marts.fct_savings_opportunities WHERE day = ?",
                              [simulated_ledger.days[-1]]).fetchall()
    assert covered == [(len(simulated_ledger.days),)]


def test_the_simulated_fleet_has_every_kind(both):
    truth, _, _ = both
    assert all(truth.get(k) for k in KINDS), {k: len(truth.get(k, {})) for k in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_each_opportunity_equals_truth(both, kind):
    truth, mart, _ = both
    want, got = truth.get(kind, {}), mart.get(kind, {})
    assert sorted(got) == sorted(want), (kind, sorted(got.keys() - want.keys()), sorted(want.keys() - got.keys()))
    worst = max(abs(got[s] - w) / w for s, w in want.items())
    print(f"{kind}: {len(want)} subjects, max relative difference {worst:.2e}")
    for subject, w in want.items():
        assert got[subject] == pytest.approx(w, rel=REL), (kind, subject, w, got[subject])
